// Opening a store file below the store's root without ever leaving it, however the path's
// directories are swapped for symlinks meanwhile. Resolving a path (realpath) and then opening
// it by name lets a directory replaced in between lead anywhere; here every step is taken from a
// descriptor already held, so what is opened is what was checked.
//
// On Linux, openat2 with RESOLVE_BENEATH does it in one call: symlinks are followed only while
// they stay below the root, and an attempt to leave fails with EXDEV. An absolute symlink also
// fails with EXDEV even when it points inside, and kernels before 5.6 (or sandboxes) have no
// openat2: both go to the walk, which opens one component at a time from the directory before it
// with O_NOFOLLOW, reads every symlink itself, and follows it only while it stays inside (an
// absolute target must start with the root's real path; ".." never climbs above the root).
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

/** The path leaves the root (a symlink out of it, or ".." above it). */
#define BENEATH_OUTSIDE -100002
/** Directories deep a walk may go, and symlinks it may follow, before it gives up. */
#define BENEATH_MAX_DEPTH 64
#define BENEATH_MAX_LINKS 40

#ifdef __linux__
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
// The kernel's struct open_how and resolve flags, declared here for headers older than 5.6.
struct beneath_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
#define BENEATH_RESOLVE_NO_MAGICLINKS 0x02
#define BENEATH_RESOLVE_BENEATH 0x08
static int beneath_no_openat2;
#endif

static const int BENEATH_FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

// The walk: `rel` resolved one component at a time from `rootfd`, the directory at `root`.
static int beneath_walk(int rootfd, const char *root, const char *rel) {
  const size_t cap = 2 * PATH_MAX;
  char *rest = (char *)malloc(cap);
  char *link = (char *)malloc(PATH_MAX);
  int stack[BENEATH_MAX_DEPTH];
  int depth = 0, links = 0, result = -ENOENT;
  size_t pos = 0;
  stack[0] = rootfd;
  if (!rest || !link) {
    free(rest);
    free(link);
    return -ENOMEM;
  }
  if (strlen(rel) >= cap) {
    result = -ENAMETOOLONG;
    goto done;
  }
  strcpy(rest, rel);
  for (;;) {
    while (rest[pos] == '/') pos++;
    if (rest[pos] == '\0') {
      result = -EISDIR;
      break;
    }
    size_t end = pos;
    while (rest[end] != '\0' && rest[end] != '/') end++;
    size_t after = end;
    while (rest[after] == '/') after++;
    int last = rest[after] == '\0';
    char name[NAME_MAX + 1];
    if (end - pos > NAME_MAX) {
      result = -ENAMETOOLONG;
      break;
    }
    memcpy(name, rest + pos, end - pos);
    name[end - pos] = '\0';
    pos = after;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
      if (name[1] == '.') {
        if (depth == 0) {
          result = BENEATH_OUTSIDE;
          break;
        }
        close(stack[depth--]);
      }
      if (last) {
        result = -EISDIR;
        break;
      }
      continue;
    }
    int cur = stack[depth];
    int fd = last ? openat(cur, name, BENEATH_FILE_FLAGS) : openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      if (last) {
        result = fd;
        break;
      }
      if (depth + 1 >= BENEATH_MAX_DEPTH) {
        close(fd);
        result = -ENAMETOOLONG;
        break;
      }
      stack[++depth] = fd;
      continue;
    }
    // A symlink met with O_NOFOLLOW fails with ELOOP (ENOTDIR when a directory was asked for).
    int first = errno;
    if (first != ELOOP && first != ENOTDIR) {
      result = -first;
      break;
    }
    ssize_t n = readlinkat(cur, name, link, PATH_MAX - 1);
    if (n < 0) {
      result = errno == EINVAL ? -first : -errno;  // EINVAL: not a symlink after all
      break;
    }
    link[n] = '\0';
    if (++links > BENEATH_MAX_LINKS) {
      result = -ELOOP;
      break;
    }
    const char *target = link;
    if (link[0] == '/') {
      size_t r = strlen(root);
      if (strcmp(root, "/") != 0) {
        if (strncmp(link, root, r) != 0 || (link[r] != '\0' && link[r] != '/')) {
          result = BENEATH_OUTSIDE;
          break;
        }
        target = link + r;
      }
      while (depth > 0) close(stack[depth--]);
    }
    // What is left to resolve: the link's target, then the rest of the path after the link.
    size_t tl = strlen(target), rl = strlen(rest + pos);
    if (tl + rl + 2 > cap) {
      result = -ENAMETOOLONG;
      break;
    }
    memmove(rest + tl + 1, rest + pos, rl + 1);
    memcpy(rest, target, tl);
    rest[tl] = '/';
    pos = 0;
  }
done:
  while (depth > 0) close(stack[depth--]);
  free(rest);
  free(link);
  return result;
}

// A descriptor of what `rel` names below the directory `root` (a real path), opened for reading
// (O_NONBLOCK: a FIFO cannot hold the thread); or -errno, or BENEATH_OUTSIDE. `walk_only` skips
// openat2 (tests use it to check the walk on kernels that have openat2).
static int open_beneath(const char *root, const char *rel, int walk_only) {
  int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) return -errno;
  int fd = -ENOSYS;
#ifdef __linux__
  if (!walk_only && !__atomic_load_n(&beneath_no_openat2, __ATOMIC_RELAXED)) {
    struct beneath_how how = {(uint64_t)(BENEATH_FILE_FLAGS & ~O_NOFOLLOW), 0,
                              BENEATH_RESOLVE_BENEATH | BENEATH_RESOLVE_NO_MAGICLINKS};
    long r = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
    fd = r >= 0 ? (int)r : -errno;
    if (fd == -ENOSYS) __atomic_store_n(&beneath_no_openat2, 1, __ATOMIC_RELAXED);
  }
#endif
  // EXDEV: an absolute symlink or a way out (the walk tells which); EAGAIN: a rename raced a
  // ".."; ENOSYS, EPERM, EINVAL, E2BIG: no usable openat2 here.
  if (fd == -ENOSYS || fd == -EXDEV || fd == -EAGAIN || fd == -EPERM || fd == -EINVAL || fd == -E2BIG) {
    fd = beneath_walk(rootfd, root, rel);
  }
  close(rootfd);
  return fd;
}

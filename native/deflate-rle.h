// A zlib stream (RFC 1950 around one RFC 1951 block) of run-length deflate, for PNG rows: the
// tokens of zlib's Z_RLE strategy (a byte, or a run of at least three repeating the byte before
// it, as one match at distance 1, greedy) coded with one dynamic Huffman block whose codes are
// made for this input. PNG tiles filtered Up are mostly such runs; this finds where runs begin 64
// bytes at a time, counts them, then writes each run (its byte and what repeats it) as one store
// of whole codes, where zlib's general machinery (windows, hash tables, several blocks) costs
// several times more. Any inflater reads the result.
#ifndef GRIDCAST_DEFLATE_RLE_H
#define GRIDCAST_DEFLATE_RLE_H

#include <endian.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if __BYTE_ORDER != __LITTLE_ENDIAN
#error "deflate-rle.h reads eight bytes at a time as a little-endian word"
#endif

#define DR_LITLEN 286
#define DR_MAX_BITS 15
#define DR_CL_MAX_BITS 7

// Length codes 257..285: the first length of each and its extra bits (RFC 1951, 3.2.5).
static const uint16_t dr_len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                         31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t dr_len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint8_t dr_cl_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

// Length 3..258 → its length code (0..28): filled by dr_init, which must run once before
// deflate_rle is first called (the addon runs it in its pthread_once library set-up).
static uint8_t dr_len_code[259];

static void dr_init(void) {
  for (int c = 0; c < 29; c++) {
    int end = c == 28 ? 259 : dr_len_base[c] + (1 << dr_len_extra[c]);
    for (int l = dr_len_base[c]; l < end && l < 259; l++) dr_len_code[l] = (uint8_t)c;
  }
}

// Bits go out least significant first, eight bytes stored at a time (whole bytes kept, the rest
// carried): no branch per code. `end` leaves room for that eight-byte store.
typedef struct {
  unsigned char *out, *end;
  uint64_t bits;
  unsigned count;
} DrBits;

static inline void dr_put(DrBits *b, uint64_t value, unsigned n) {
  b->bits |= value << b->count;
  b->count += n;
  memcpy(b->out, &b->bits, 8);
  unsigned whole = b->count & ~7u;
  b->out += whole >> 3;
  b->bits >>= whole;  // n ≤ 45 and count < 8: whole < 64
  b->count -= whole;
}

// Order of symbols by ascending frequency (insertion sort on at most 286 used symbols: the
// frequencies arrive nearly sorted by nothing in particular, and n is small).
static int dr_by_freq(const uint32_t *freq, int n, int *order) {
  int m = 0;
  for (int s = 0; s < n; s++) {
    if (!freq[s]) continue;
    int i = m++;
    while (i > 0 && freq[order[i - 1]] > freq[s]) {
      order[i] = order[i - 1];
      i--;
    }
    order[i] = s;
  }
  return m;
}

// Huffman code lengths, at most `limit` bits, for the symbols with a nonzero frequency (the
// others get 0). The lengths of an optimal code are computed in place over the sorted weights
// (the two-queue construction, leaves and internal nodes sharing one array); when the longest
// exceeds the limit the weights are halved (a used symbol keeps at least 1) and it is done again.
static void dr_lengths(const uint32_t *freq_in, int n, int limit, uint8_t *len) {
  uint32_t freq[DR_LITLEN];
  int order[DR_LITLEN];
  uint32_t a[DR_LITLEN];
  memcpy(freq, freq_in, (size_t)n * sizeof freq[0]);
  memset(len, 0, (size_t)n);
  for (;;) {
    int m = dr_by_freq(freq, n, order);
    if (m == 0) return;
    if (m == 1) {
      // Two codes of one bit (one never sent): a code-length code must be complete to inflate.
      len[order[0]] = 1;
      len[order[0] == 0 ? 1 : 0] = 1;
      return;
    }
    for (int i = 0; i < m; i++) a[i] = freq[order[i]];
    // Pass 1: a[] becomes parent pointers of the internal nodes, built in order of weight.
    int root = 0, leaf = 2, next;
    a[0] += a[1];
    for (next = 1; next < m - 1; next++) {
      if (leaf >= m || a[root] < a[leaf]) {
        a[next] = a[root];
        a[root++] = (uint32_t)next;
      } else {
        a[next] = a[leaf++];
      }
      if (leaf >= m || (root < next && a[root] < a[leaf])) {
        a[next] += a[root];
        a[root++] = (uint32_t)next;
      } else {
        a[next] += a[leaf++];
      }
    }
    // Pass 2: depths of the internal nodes, from the root down.
    a[m - 2] = 0;
    for (int i = m - 3; i >= 0; i--) a[i] = a[a[i]] + 1;
    // Pass 3: depths of the leaves, from the number of internal nodes at each depth.
    int avail = 1, used = 0, depth = 0;
    root = m - 2;
    next = m - 1;
    while (avail > 0) {
      while (root >= 0 && (int)a[root] == depth) {
        used++;
        root--;
      }
      while (avail > used) {
        a[next--] = (uint32_t)depth;
        avail--;
      }
      avail = 2 * used;
      depth++;
      used = 0;
    }
    int longest = 0;
    for (int i = 0; i < m; i++) longest = (int)a[i] > longest ? (int)a[i] : longest;
    if (longest <= limit) {
      // a[i] is the length of the i-th lightest symbol.
      for (int i = 0; i < m; i++) len[order[i]] = (uint8_t)a[i];
      return;
    }
    for (int s = 0; s < n; s++)
      if (freq[s]) freq[s] = (freq[s] >> 1) | 1;
  }
}

// Canonical codes for the lengths, bit-reversed for LSB-first output.
static void dr_codes(const uint8_t *len, int n, uint16_t *code) {
  uint16_t count[DR_MAX_BITS + 1] = {0}, next[DR_MAX_BITS + 2];
  for (int s = 0; s < n; s++) count[len[s]]++;
  count[0] = 0;
  uint16_t c = 0;
  for (int b = 1; b <= DR_MAX_BITS; b++) {
    c = (uint16_t)((c + count[b - 1]) << 1);
    next[b] = c;
  }
  for (int s = 0; s < n; s++) {
    int l = len[s];
    if (!l) continue;
    uint16_t v = next[l]++, r = 0;
    for (int i = 0; i < l; i++) r = (uint16_t)((r << 1) | ((v >> i) & 1));
    code[s] = r;
  }
}

static uint32_t dr_adler(const unsigned char *p, size_t n) {
  uint32_t a = 1, b = 0;
  while (n > 0) {
    // 5552 bytes at most between reductions keep both sums within 32 bits (zlib's NMAX).
    size_t k = n < 5552 ? n : 5552;
    n -= k;
#ifdef __SSE2__
    // Sixteen bytes at a time: a gains their sum, b gains 16a and the bytes weighted 16..1. The
    // sums of earlier blocks are kept apart (ps) and added sixteenfold at the end.
    size_t blocks = k / 16;
    if (blocks > 0) {
      const __m128i zero = _mm_setzero_si128();
      const __m128i w_lo = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9);
      const __m128i w_hi = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
      __m128i vs1 = zero, vps = zero, vs2 = zero;
      for (size_t t = 0; t < blocks; t++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * t));
        vps = _mm_add_epi32(vps, vs1);
        vs1 = _mm_add_epi32(vs1, _mm_sad_epu8(v, zero));
        vs2 = _mm_add_epi32(vs2, _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), w_lo));
        vs2 = _mm_add_epi32(vs2, _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), w_hi));
      }
      uint32_t l1[4], lps[4], l2[4];
      _mm_storeu_si128((__m128i *)l1, vs1);
      _mm_storeu_si128((__m128i *)lps, vps);
      _mm_storeu_si128((__m128i *)l2, vs2);
      b += (uint32_t)(16 * blocks) * a + 16 * (lps[0] + lps[2]) + l2[0] + l2[1] + l2[2] + l2[3];
      a += l1[0] + l1[2];
      p += 16 * blocks;
      k -= 16 * blocks;
    }
#endif
    while (k--) {
      a += *p++;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return (b << 16) | a;
}

// The tokens zlib's Z_RLE strategy picks, greedily, for a run of a byte and `r` repeats of it: the
// byte as a literal, then matches of 258 at distance 1 while more than 258 repeats are left, then
// the rest as one match (3..258) or as one or two more literals. deflate_rle codes exactly these.

// The places where a byte differs from the one before it (where a run begins), from 1 on, into
// `at`; returns their number. Sixteen bytes are compared with the sixteen one byte back, four
// times, and the 64-bit mask's set bits written out eight at a time whether or not there are
// eight (the count says how many are real): no branch per run, so the cost goes with the number
// of 64-byte blocks and of runs, not with how unevenly they fall. `at` must hold n + 64 entries.
static size_t dr_run_starts(const unsigned char *src, size_t n, uint32_t *at) {
  size_t na = 0, p = 1;
#ifdef __SSE2__
  for (; p + 64 <= n; p += 64) {
    uint64_t m = 0;
    for (int k = 0; k < 4; k++) {
      __m128i a = _mm_loadu_si128((const __m128i *)(src + p + 16 * k));
      __m128i b = _mm_loadu_si128((const __m128i *)(src + p + 16 * k - 1));
      m |= (uint64_t)((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) ^ 0xffffu) << (16 * k);
    }
#ifdef __POPCNT__
    size_t count = (size_t)__builtin_popcountll(m);
#else
    // Without the instruction (the default x86-64 target) the builtin is a library call.
    uint64_t x = m - (m >> 1 & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + (x >> 2 & 0x3333333333333333ULL);
    size_t count = (size_t)(((x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL) * 0x0101010101010101ULL >> 56);
#endif
    uint32_t *o = at + na;
    na += count;
    while (m) {
      for (int k = 0; k < 8; k++) {
        o[k] = (uint32_t)(p + (size_t)__builtin_ctzll(m | (1ULL << 63)));
        m &= m - 1;
      }
      o += 8;
    }
  }
#endif
  for (; p < n; p++)
    if (src[p] != src[p - 1]) at[na++] = (uint32_t)p;
  at[na] = (uint32_t)n;  // the end of the last run
  return na;
}

// Returns the stream's length in `out`, or 0 when `cap` bytes might not hold it (about 2.7 bytes
// per token of room is asked for) or `n` is 4 GiB or more. `at` must hold `n + 64` entries.
static size_t deflate_rle(const unsigned char *src, size_t n, unsigned char *out, size_t cap, uint32_t *at) {
  if (n >= UINT32_MAX) return 0;
  uint32_t freq[DR_LITLEN] = {0}, rest[259] = {0};
  // Runs: the first from 0 to at[0], the others from at[i] to at[i + 1] (at[na] is n).
  size_t na = n > 0 ? dr_run_starts(src, n, at) : 0, nt = 0;
  for (size_t i = 0, q = 0; n > 0 && i <= na; q = at[i++]) {
    const unsigned c = src[q];
    size_t r = at[i] - q - 1;
    if (r > 258) {
      size_t k = (r - 1) / 258;
      freq[257 + 28] += (uint32_t)k;
      nt += k;
      r -= 258 * k;  // 1..258
    }
    freq[c] += 1 + (r < 3 ? (uint32_t)r : 0);
    rest[r]++;
    nt += 1 + (r < 3 ? r : 1);
  }
  for (int r = 3; r <= 258; r++) freq[257 + dr_len_code[r]] += rest[r];
  freq[256] = 1;
  uint8_t len[DR_LITLEN + 1];
  uint16_t code[DR_LITLEN] = {0};
  dr_lengths(freq, DR_LITLEN, DR_MAX_BITS, len);
  dr_codes(len, DR_LITLEN, code);
  int nlit = DR_LITLEN;
  while (nlit > 257 && len[nlit - 1] == 0) nlit--;
  // One distance code (distance 1) of one bit: lengths lit/len..., then 1.
  uint8_t all[DR_LITLEN + 1];
  memcpy(all, len, (size_t)nlit);
  all[nlit] = 1;
  int nall = nlit + 1;
  // The code lengths, run-length coded (16: repeat the last 3..6 times, 17/18: zeros 3..10/11..138).
  uint8_t cl_sym[DR_LITLEN + 1], cl_extra[DR_LITLEN + 1];
  int ncl = 0;
  uint32_t cl_freq[19] = {0};
  for (int i = 0; i < nall;) {
    int v = all[i], r = 1;
    while (i + r < nall && all[i + r] == v) r++;
    int left = r;
    if (v == 0) {
      while (left >= 11) {
        int k = left > 138 ? 138 : left;
        cl_sym[ncl] = 18, cl_extra[ncl++] = (uint8_t)(k - 11), cl_freq[18]++, left -= k;
      }
      if (left >= 3) cl_sym[ncl] = 17, cl_extra[ncl++] = (uint8_t)(left - 3), cl_freq[17]++, left = 0;
    } else {
      cl_sym[ncl] = (uint8_t)v, cl_extra[ncl++] = 0, cl_freq[v]++, left--;
      while (left >= 3) {
        int k = left > 6 ? 6 : left;
        cl_sym[ncl] = 16, cl_extra[ncl++] = (uint8_t)(k - 3), cl_freq[16]++, left -= k;
      }
    }
    while (left-- > 0) cl_sym[ncl] = (uint8_t)v, cl_extra[ncl++] = 0, cl_freq[v]++;
    i += r;
  }
  uint8_t cl_len[19];
  uint16_t cl_code[19] = {0};
  dr_lengths(cl_freq, 19, DR_CL_MAX_BITS, cl_len);
  dr_codes(cl_len, 19, cl_code);
  int hclen = 19;
  while (hclen > 4 && cl_len[dr_cl_order[hclen - 1]] == 0) hclen--;

  // The header, the code lengths (at most 320 codes of up to 7 + 7 bits) and every token (at most
  // 15 + 5 + 1 bits), then the checksum, with eight bytes' room for the last store.
  if (cap < 2 + 600 + (nt + 1) * 21 / 8 + 4 + 16) return 0;
  DrBits b = {out + 2, out + cap, 0, 0};
  out[0] = 0x78;  // deflate, 32 KiB window
  out[1] = 0x01;  // no dictionary, fastest-level hint; (0x78 << 8 | 0x01) is a multiple of 31
  dr_put(&b, 1 | (2 << 1), 3);  // the last block, dynamic codes
  dr_put(&b, (uint32_t)(nlit - 257), 5);
  dr_put(&b, 0, 5);  // one distance code
  dr_put(&b, (uint32_t)(hclen - 4), 4);
  for (int i = 0; i < hclen; i++) dr_put(&b, cl_len[dr_cl_order[i]], 3);
  static const uint8_t cl_extra_bits[19] = {[16] = 2, [17] = 3, [18] = 7};
  for (int i = 0; i < ncl; i++) {
    int s = cl_sym[i];
    dr_put(&b, cl_code[s], cl_len[s]);
    if (cl_extra_bits[s]) dr_put(&b, cl_extra[i], cl_extra_bits[s]);
  }
  // A run's whole code in one store: its first byte's code, then that of the match of its rest
  // (length code, extra bits, distance code 0: one bit, 0) or of its one or two repeated literals,
  // chosen by masks rather than branches. At most 3 × 15 bits, or 15 + 21, on top of the 7
  // carried: within the 64-bit buffer.
  uint64_t mcode[259] = {0};
  uint8_t mlen[259] = {0};
  for (int r = 3; r <= 258; r++) {
    int c = dr_len_code[r], s = 257 + c;
    mcode[r] = code[s] | (uint32_t)(r - dr_len_base[c]) << len[s];
    mlen[r] = (uint8_t)(len[s] + dr_len_extra[c] + 1);
  }
  for (size_t i = 0, q = 0; n > 0 && i <= na; q = at[i++]) {
    const unsigned c = src[q];
    const uint64_t lc = code[c];
    const unsigned ll = len[c];
    size_t r = at[i] - q - 1;
    if (r > 258) {
      dr_put(&b, lc, ll);
      for (size_t k = (r - 1) / 258; k > 0; k--, r -= 258) dr_put(&b, mcode[258], mlen[258]);
      if (r >= 3) dr_put(&b, mcode[r], mlen[r]);
      for (; r > 0 && r < 3; r--) dr_put(&b, lc, ll);
      continue;
    }
    const uint64_t is_match = 0 - (uint64_t)(r >= 3), one = 0 - (uint64_t)(r >= 1), two = 0 - (uint64_t)(r >= 2);
    const uint64_t v = lc | (mcode[r] << ll & is_match) | (((lc << ll & one) | (lc << 2 * ll & two)) & ~is_match);
    const unsigned bits = ll + ((unsigned)mlen[r] & (unsigned)is_match) + ((unsigned)r * ll & ~(unsigned)is_match);
    dr_put(&b, v, bits);
  }
  dr_put(&b, code[256], len[256]);
  if (b.count > 0) *b.out++ = (unsigned char)b.bits;  // the last partial byte
  uint32_t adler = dr_adler(src, n);
  b.out[0] = (unsigned char)(adler >> 24);
  b.out[1] = (unsigned char)(adler >> 16);
  b.out[2] = (unsigned char)(adler >> 8);
  b.out[3] = (unsigned char)adler;
  return (size_t)(b.out + 4 - out);
}

#endif

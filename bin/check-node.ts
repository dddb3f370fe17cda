// npm scripts put node_modules/.bin first on PATH, so the pinned Node 24 from the
// `node` devDependency runs them; this guard explains the failure if it does not.
const major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  console.error(
    `gridcast needs Node.js 24 or newer (running ${process.versions.node}); run it through npm so the pinned Node is used.`,
  );
  process.exit(1);
}

// Plain JavaScript on purpose: it must run on any Node, so that an older one (a machine's own
// Node 20, say) gets a readable message instead of a stack trace about the ".ts" extension.
// Imported first by bin/gridcast; `npm test` runs it before anything else.
const major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  process.stderr.write(
    `gridcast needs Node.js 24 or newer; this is Node ${process.versions.node}.\n` +
      "`npm ci` installs Node 24 into the project: run the CLI as `npx gridcast ...` or `npm run gridcast -- ...`\n" +
      "(npm start and npm test use it too), or put node_modules/.bin first on your PATH.\n",
  );
  process.exit(1);
}

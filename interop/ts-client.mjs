// Interop smoke with the official TypeScript SDK client: tools/list must
// name the same tools as GET /tools, and tools/call must return the same
// envelopes as POST /call/<tool>. Exit status 0 = pass.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { HELP_CALL, INVALID_CALL, baseURL, checkCall, restToolNames } from "./lib.mjs";

const base = baseURL();
const client = new Client({ name: "cursus-interop-ts", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
await client.connect(transport);
try {
  const names = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  assert.deepEqual(names.sort(), await restToolNames(base), "tools/list names equal GET /tools");

  await checkCall(base, HELP_CALL, await client.callTool(HELP_CALL), { wantError: false }, "ts-sdk tools__help");
  await checkCall(base, INVALID_CALL, await client.callTool(INVALID_CALL), { wantError: true, wantCode: "invalid_input" }, "ts-sdk invalid call");
  console.log(`ts-sdk: ok (protocol ${transport.protocolVersion ?? "?"}, ${names.length} tools)`);
} finally {
  await client.close();
}

// Interop smoke with the official TypeScript SDK client: tools/list must
// name the same tools as GET /tools, tools/call must return the same
// envelopes as POST /call/<tool>, resources/read must serve what the
// resource's tool returns, and completion/complete must complete a prompt
// argument and a template variable. CURSUS_TRANSPORT=sse uses the legacy
// SSE transport (/sse) instead of streamable HTTP (/mcp); CURSUS_SESSIONS=N
// then opens N more sessions, each initialize, tools/list, tools/call and
// close (ending a stateful session with DELETE), and fails on any failure.
// Exit status 0 = pass.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { HELP_CALL, INVALID_CALL, baseURL, checkCall, restEnvelope, restToolNames } from "./lib.mjs";

const base = baseURL();
const sse = process.env.CURSUS_TRANSPORT === "sse";
const newTransport = () => (sse ? new SSEClientTransport(new URL(`${base}/sse`)) : new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
// close ends a session: a stateful streamable HTTP one with DELETE, so it
// does not hold the caller's session cap until it expires.
const close = async (client, transport) => {
  if (!sse && transport.sessionId) await transport.terminateSession();
  await client.close();
};
const client = new Client({ name: "cursus-interop-ts", version: "1.0.0" });
const transport = newTransport();
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

  const { resources } = await client.listResources();
  const { resourceTemplates } = await client.listResourceTemplates();
  const step = "cursus://steps/XGBoostTraining";
  assert.ok(resources.some((r) => r.uri === step), `resources/list names ${step}`);
  assert.ok(resourceTemplates.some((t) => t.uriTemplate === "cursus://steps/{step_type}"), "resources/templates/list has the step type template");
  const read = await client.readResource({ uri: step });
  const source = await restEnvelope(base, { name: "steps.source", arguments: { step_name: "XGBoostTraining" } });
  assert.equal(read.contents[0].text, source.data.yaml, `${step} is the .step.yaml steps.source returns`);
  await assert.rejects(client.readResource({ uri: "cursus://steps/NoSuchStep" }), /NoSuchStep/, "an unknown step type is an error");

  const producer = await client.complete({
    ref: { type: "ref/prompt", name: "cursus-author-step" },
    argument: { name: "producer_node", value: "XGB" },
  });
  assert.ok(producer.completion.values.includes("XGBoostTraining"), "producer_node completes to XGBoostTraining");
  const dag = await client.complete({
    ref: { type: "ref/resource", uri: "cursus://dags/{dag_id}" },
    argument: { name: "dag_id", value: "xgboost_" },
  });
  assert.ok(dag.completion.values.length > 0 && dag.completion.values.every((v) => v.startsWith("xgboost_")), "dag_id completes by prefix");
  // A workflow run another client started (its token is the first
  // argument, from interop/gostart): the TypeScript client finishes it.
  const run = process.argv[2];
  if (run) {
    const example = new URL("../examples/xgboost-tabular/", import.meta.url);
    const dag = JSON.parse(await readFile(new URL("dag.json", example), "utf8"));
    const config = JSON.parse(await readFile(new URL("config.json", example), "utf8"));
    const submit = async (token, stage) => {
      const res = await client.callTool({ name: "workflow__submit", arguments: { run: token, stage, content: { dag, config } } });
      assert.ok(!res.isError, `workflow.submit ${stage}: ${JSON.stringify(res.structuredContent)}`);
      return res.structuredContent.data;
    };
    const validated = await submit(run, "Validate");
    assert.equal(validated.status, "passed", "Validate passes");
    const green = await submit(validated.run, "DagCheck");
    assert.equal(green.status, "green", "the run ends green");
    assert.deepEqual(Object.keys(green.certified).sort(), ["Constrain", "DagCheck", "Validate"], "every gate is certified");
  }
  const sessions = Number(process.env.CURSUS_SESSIONS ?? 0);
  for (let i = 0; i < sessions; i++) {
    const c = new Client({ name: "cursus-interop-ts", version: "1.0.0" });
    const t = newTransport();
    try {
      await c.connect(t);
      await c.listTools();
      await checkCall(base, HELP_CALL, await c.callTool(HELP_CALL), { wantError: false }, `ts-sdk session ${i} tools__help`);
    } finally {
      await close(c, t);
    }
  }
  console.log(`ts-sdk: ok (${sse ? "legacy SSE" : `protocol ${transport.protocolVersion ?? "?"}`}, ${names.length} tools, ${resources.length} resources${run ? ", finished a go-sdk workflow run" : ""}${sessions ? `, ${sessions} more sessions` : ""})`);
} finally {
  await close(client, transport);
}

// Shared helpers for the interop checks: the server under test, the REST
// reference answers, and envelope comparison.
import assert from "node:assert/strict";

// The calls every client makes, and what each must return.
export const HELP_CALL = { name: "tools__help", arguments: {} };
// A wrong type for a declared argument: the registry must answer with the
// invalid_input envelope as a tool result (isError), not a protocol error.
export const INVALID_CALL = { name: "tools__by_phase", arguments: { phase: 7 } };

// baseURL reads CURSUS_URL and refuses anything but a loopback address, so
// these checks can never be pointed at someone else's server.
export function baseURL() {
  const raw = process.env.CURSUS_URL;
  if (!raw) throw new Error("CURSUS_URL is not set (e.g. http://127.0.0.1:8080)");
  const u = new URL(raw);
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (!(host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host))) {
    throw new Error(`CURSUS_URL ${raw} is not a loopback address`);
  }
  return u.origin;
}

// restToolNames is the reference tool list: GET /tools in the OpenAI shape.
export async function restToolNames(base) {
  const resp = await fetch(`${base}/tools`);
  assert.equal(resp.status, 200, "GET /tools status");
  const tools = await resp.json();
  return tools.map((t) => t.function.name).sort();
}

// restEnvelope is the reference envelope: POST /call/<tool>.
export async function restEnvelope(base, call) {
  const resp = await fetch(`${base}/call/${call.name}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(call.arguments),
  });
  return resp.json();
}

// stable drops the one field that differs between two runs of the same
// call: the measured duration.
export function stable(envelope) {
  const copy = structuredClone(envelope);
  if (copy.meta) delete copy.meta.duration_ms;
  return copy;
}

// envelopeFromResult checks a tools/call result carries the envelope twice
// (text content and structuredContent), identically, and returns it.
export function envelopeFromResult(result, label) {
  assert.ok(Array.isArray(result.content) && result.content.length === 1, `${label}: one content block`);
  assert.equal(result.content[0].type, "text", `${label}: text content`);
  const fromText = JSON.parse(result.content[0].text);
  assert.deepEqual(result.structuredContent, fromText, `${label}: structuredContent equals the text envelope`);
  return fromText;
}

// checkCall asserts a client's result for call matches the REST envelope.
export async function checkCall(base, call, result, { wantError, wantCode }, label) {
  const env = envelopeFromResult(result, label);
  assert.equal(Boolean(result.isError), wantError, `${label}: isError`);
  assert.equal(env.ok, !wantError, `${label}: envelope ok`);
  if (wantCode) assert.equal(env.code, wantCode, `${label}: envelope code`);
  const rest = await restEnvelope(base, call);
  assert.deepEqual(stable(env), stable(rest), `${label}: same envelope as POST /call/${call.name}`);
}

// A tenant secret that is not a valid HTTP header value (issue: found by attacking keel,
// item 4). Before the fix PUT stored it, and every use of it as a header made the HTTP
// client throw an error quoting the whole value — which became the MCP tool's error, the
// run's trace and the model's next input, the PUT T/mcp answer and the server's
// last_error. Now PUT refuses it (400 naming body.value, nothing stored), and one stored
// before the rule is refused at connect, named, never shown.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { requestJson } from './helpers/json-request.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const TENANT = 'acme';
/** What must never appear in an answer, a trace or the model's input. */
const MARKER = 'LEAK-7f3a9c';
/** Header values a client refuses: each carries the marker. */
const BAD_VALUES = [
  `Bearer ${MARKER}\r\nX-Injected: 1`,
  `Bearer ${MARKER}\n`,
  `Bearer ${MARKER}\u0000`,
  `Bearer ${MARKER}\u0007`,
  `Bearer ${MARKER}\u0085`,
  `Bearer ${MARKER}€`,
];

let keel: TestKeel;

function api(method: string, path: string, body?: unknown) {
  return requestJson(keel.url, method, `/v1/tenants/${TENANT}${path}`, body);
}

before(async () => {
  // The MCP URL is on loopback: allowed, so only the secret can stop the connection.
  keel = await startTestKeel({ toml: '[mcp]\nallow_hosts = ["127.0.0.1"]\n' });
  const created = await fetch(`${keel.url}/v1/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: TENANT }),
  });
  assert.equal(created.status, 201);
  assert.equal((await api('PUT', '/agents/a', { model: 'fixture/echo' })).status, 201);
});
after(() => keel.close());

describe('secret values never in an error', () => {
  it('PUT T/secrets/:name refuses it with 400 naming body.value, and stores nothing', async () => {
    for (const value of BAD_VALUES) {
      const put = await api('PUT', '/secrets/bad', { value });
      assert.equal(put.status, 400, `${JSON.stringify(value)}: ${put.text}`);
      assert.equal(put.body.error.code, 'VALIDATION_FAILED');
      assert.match(put.body.error.message, /body\.value/);
      assert.doesNotMatch(put.text, new RegExp(MARKER));
    }
    assert.deepEqual((await api('GET', '/secrets')).body.secrets, []);
    // Latin-1 and tab are header values: still accepted.
    const good = await api('PUT', '/secrets/good', { value: `Bearer\tcafé-${MARKER}` });
    assert.equal(good.status, 201, good.text);
    assert.equal((await api('DELETE', '/secrets/good')).status, 200);
  });

  it('one stored before the rule: PUT T/mcp, the tool error, the trace and the model input name it, never its value', async () => {
    // As a store written before PUT checked values holds it.
    await keel.store.putSecret(TENANT, 'old-token', BAD_VALUES[0] as string);
    const transport = {
      type: 'http',
      url: 'http://127.0.0.1:9/mcp',
      headers_from: { Authorization: 'old-token' },
    };
    const put = await api('PUT', '/mcp/fresh', { transport });
    assert.equal(put.status, 400, put.text);
    assert.doesNotMatch(put.text, new RegExp(MARKER), 'the PUT answer shows the value');
    assert.match(put.body.error.message, /transport\.headers_from\.Authorization/);
    assert.match(put.body.error.message, /old-token/);

    // A server registered before (its tools listed then): the call connects only now.
    await keel.store.putMcpServer(TENANT, 'remote', {
      spec: { enabled: true, transport },
      tools: [
        {
          name: 'echo',
          description: 'echo',
          input_schema: { type: 'object', properties: {} },
          annotations: { readOnlyHint: true },
        },
      ],
      last_error: null,
    });
    const submitted = await api('POST', '/turns', {
      agent: 'a',
      scope: 's1',
      payload: { text: '@call mcp_remote_echo {}' },
    });
    assert.equal(submitted.status, 202, submitted.text);
    const runId = submitted.body.run_id as string;
    const waited = await api('GET', `/runs/${runId}/wait?timeout_ms=30000`);
    assert.equal(waited.body.timed_out, false);
    const trace = await api('GET', `/runs/${runId}/trace?limit=1000`);
    const results = trace.body.events.filter((event: Loose) => event.type === 'tool.result');
    assert.equal(results.length, 1, trace.text);
    const result = results[0].data;
    assert.equal(result.ok, false);
    assert.equal(result.error.code, 'MCP_PROTOCOL_ERROR');
    console.log(`tool error the model sees: ${result.error.message}`);
    assert.match(result.error.message, /old-token/);
    const seen = [trace.text, waited.text, (await api('GET', `/runs/${runId}`)).text];
    for (const text of seen) {
      assert.doesNotMatch(text, new RegExp(MARKER), 'the value reached a trace or the run');
    }
    assert.doesNotMatch((await api('GET', '/mcp')).text, new RegExp(MARKER));
    console.log(`checked ${trace.body.events.length} trace events: no secret value`);
  });

  it('a server that echoes the header back in its error: the answer shows no secret value', async () => {
    // Plain HTTP, not MCP: every request is refused with its own Authorization header.
    const echoing = createServer((request, response) => {
      response.writeHead(401, { 'content-type': 'text/plain' });
      response.end(`bad credentials: ${request.headers.authorization ?? ''}`);
    });
    await new Promise<void>((done) => echoing.listen(0, '127.0.0.1', done));
    try {
      const port = (echoing.address() as AddressInfo).port;
      const value = `Bearer ${MARKER}-valid`;
      assert.equal((await api('PUT', '/secrets/echoed', { value })).status, 201);
      const put = await api('PUT', '/mcp/echoing', {
        transport: {
          type: 'http',
          url: `http://127.0.0.1:${port}/mcp`,
          headers_from: { Authorization: 'echoed' },
        },
      });
      assert.equal(put.status, 400, put.text);
      assert.equal(put.body.error.code, 'MCP_SERVER_FAILED');
      console.log(`PUT answer: ${put.body.error.message}`);
      assert.doesNotMatch(
        put.text,
        new RegExp(MARKER),
        'the server echoed the secret into the error',
      );
    } finally {
      echoing.close();
    }
  });

  it('an MCP server whose error results echo the header (as sent, JSON-escaped, percent-encoded): no value in the trace', async () => {
    // A real MCP server (streamable HTTP, stateless) whose every tool fails with the
    // request's Authorization header in its error text, in one form per tool.
    const forms: Record<string, (header: string) => string> = {
      plain: (header) => `denied for ${header}`,
      json: (header) => JSON.stringify({ error: 'denied', headers: { authorization: header } }),
      url: (header) => `denied: see https://example.test/?auth=${encodeURIComponent(header)}`,
    };
    const mcp = createServer((request, response) => {
      const server = new Server({ name: 'echoing', version: '1' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: Object.keys(forms).map((name) => ({
          name,
          inputSchema: { type: 'object' as const, properties: {} },
          annotations: { readOnlyHint: true },
        })),
      }));
      server.setRequestHandler(CallToolRequestSchema, async (call) => {
        const header = String(request.headers.authorization ?? '');
        const text = (forms[call.params.name] as (header: string) => string)(header);
        return { isError: true, content: [{ type: 'text', text }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      response.on('close', () => void transport.close());
      void server.connect(transport).then(() => transport.handleRequest(request, response));
    });
    await new Promise<void>((done) => mcp.listen(0, '127.0.0.1', done));
    try {
      const port = (mcp.address() as AddressInfo).port;
      // A quote and a backslash make the JSON-escaped form differ from the value; a space
      // and an é make the percent-encoded one differ.
      const value = `Bearer ${MARKER} "q"\\z-café`;
      assert.equal((await api('PUT', '/secrets/mcp-token', { value })).status, 201);
      const put = await api('PUT', '/mcp/echoes', {
        transport: {
          type: 'http',
          url: `http://127.0.0.1:${port}/mcp`,
          headers_from: { Authorization: 'mcp-token' },
        },
      });
      assert.equal(put.status, 201, put.text);
      const submitted = await api('POST', '/turns', {
        agent: 'a',
        scope: 'echoes',
        payload: {
          text: Object.keys(forms)
            .map((name) => `@call mcp_echoes_${name} {}`)
            .join('\n'),
        },
      });
      assert.equal(submitted.status, 202, submitted.text);
      const runId = submitted.body.run_id as string;
      const waited = await api('GET', `/runs/${runId}/wait?timeout_ms=30000`);
      assert.equal(waited.body.timed_out, false, waited.text);
      const trace = await api('GET', `/runs/${runId}/trace?limit=1000`);
      const results = trace.body.events.filter((event: Loose) => event.type === 'tool.result');
      assert.equal(results.length, Object.keys(forms).length, trace.text);
      for (const result of results) {
        assert.equal(result.data.ok, false);
        assert.equal(result.data.error.code, 'MCP_TOOL_ERROR');
        console.log(`tool error the model sees: ${result.data.error.message}`);
        assert.match(result.data.error.message, /\[secret\]/);
      }
      const entries = await api('GET', `/runs/${runId}/entries`);
      const seen = [
        trace.text,
        waited.text,
        entries.text,
        (await api('GET', `/runs/${runId}`)).text,
      ];
      for (const text of seen) {
        assert.doesNotMatch(text, new RegExp(MARKER), 'the server echoed the secret into a trace');
      }
      console.log(`checked ${trace.body.events.length} trace events: no secret value in any form`);
    } finally {
      mcp.close();
    }
  });
});

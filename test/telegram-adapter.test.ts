// The Telegram adapter (adapters/telegram) as real child processes against a real
// `keel serve` child and a fake Bot API on loopback: a conversation keeps its thread,
// a redelivered update makes no second run, long answers arrive as ordered parts, 429
// and 5xx are retried, an adapter killed between claim and ack leaves exactly one
// visible message after restart, and users not in TELEGRAM_ALLOWED_USERS run nothing.

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  NEW_THREAD_REPLY,
  NON_TEXT_REPLY,
  REFUSED_REPLY,
} from '../adapters/telegram/src/inbound.ts';
import {
  ALREADY_DECIDED_REPLY,
  APPROVED_REPLY,
  DENIED_REPLY,
} from '../adapters/telegram/src/approvals.ts';
import { NOT_ALLOWED_BUTTON_REPLY } from '../adapters/telegram/src/access.ts';
import type { FakeBotApi } from './helpers/fake-bot-api.ts';
import { BOT_USER, buttonPress, startFakeBotApi, textUpdate } from './helpers/fake-bot-api.ts';
import { waitFor } from './helpers/wait-for.ts';
import { TS_IMPORT } from './helpers/ts-import.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const TENANT = 'tg';
/** The users (= their private chats) the tests talk as; 666, 667 and 802 are strangers. */
const ALLOWED_USERS = '1,100,200,300,310,400,500,700,800,801,900,901,1000,1100';
const children = new Set<ChildProcess>();

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_') && !key.startsWith('TELEGRAM_')) env[key] = value;
  }
  return { ...env, ...extra };
}

function spawnChild(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [...TS_IMPORT, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function readyLine(child: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line: ${out}`)), 30_000);
    const check = (chunk: Buffer): void => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', () => reject(new Error(`exited early: ${out}`)));
  });
}

// Loose JSON for assertions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(method !== 'GET' && { 'content-type': 'application/json' }),
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

describe('keel-telegram against a fake Bot API and a real keel serve', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-telegram-'));
  let keelUrl = '';
  let tenantToken = '';
  let fake: FakeBotApi;
  let adapter: ChildProcess;

  async function startAdapter(extra: Record<string, string> = {}): Promise<ChildProcess> {
    const child = spawnChild(['adapters/telegram/src/main.ts', '--agent', 'a'], {
      KEEL_URL: keelUrl,
      KEEL_TOKEN: tenantToken,
      KEEL_TENANT: TENANT,
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.url,
      TELEGRAM_ALLOWED_USERS: ALLOWED_USERS,
      KEEL_CLAIM_LEASE_MS: '1500',
      ...extra,
    });
    await readyLine(child, /keel-telegram: @keel_test_bot serving agent a/);
    return child;
  }

  async function repliesTo(chatId: number, count: number): Promise<string[]> {
    return waitFor(
      `${count} replies in chat ${chatId}`,
      () => {
        const texts = fake.sent.filter((m) => m.chat_id === String(chatId)).map((m) => m.text);
        return texts.length >= count ? texts : null;
      },
      { timeoutMs: 30_000, everyMs: 20 },
    );
  }

  before(async () => {
    fake = await startFakeBotApi();
    const keel = spawnChild(
      ['src/cli/main.ts', 'serve', '--listen', '127.0.0.1:0', '--data-dir', dir],
      { KEEL_LOG_LEVEL: 'warn' },
    );
    keelUrl = (await readyLine(keel, /keel listening on (http:\/\/\S+)/))[1] ?? '';
    assert.ok(
      [200, 201].includes((await call(keelUrl, 'POST', '/v1/tenants', { name: TENANT })).status),
    );
    const agent = await call(keelUrl, 'PUT', `/v1/tenants/${TENANT}/agents/a`, {
      model: 'fixture/echo',
    });
    assert.ok([200, 201].includes(agent.status), JSON.stringify(agent.body));
    const token = await call(keelUrl, 'POST', `/v1/tenants/${TENANT}/tokens`, { name: 'telegram' });
    assert.equal(token.status, 201, JSON.stringify(token.body));
    tenantToken = token.body.token;
    adapter = await startAdapter();
  });

  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a conversation of several messages keeps one thread; offsets are confirmed', async () => {
    for (const [index, text] of ['hello', 'how are you', 'bye'].entries()) {
      fake.push(textUpdate(100, text, index + 1));
      const replies = await repliesTo(100, index + 1);
      assert.equal(replies[index], `echo: ${text}`);
    }
    const thread = await call(
      keelUrl,
      'GET',
      `/v1/tenants/${TENANT}/threads/a/${encodeURIComponent('tg:100')}`,
      undefined,
      tenantToken,
    );
    assert.equal(thread.status, 200);
    assert.equal(thread.body.turns, 3);
    assert.ok(fake.chatActions >= 1, 'a typing action was sent');
    await waitFor('the last update confirmed', () => fake.confirmedOffset > 0);
  });

  it('a redelivered update makes no second run and no second message', async () => {
    const id = fake.push(textUpdate(200, 'only once'));
    await repliesTo(200, 1);
    fake.redeliver(id);
    fake.push(textUpdate(200, 'after'));
    const replies = await repliesTo(200, 2);
    assert.deepEqual(replies, ['echo: only once', 'echo: after']);
    const runs = await call(
      keelUrl,
      'GET',
      `/v1/tenants/${TENANT}/deliveries?destination_prefix=tg:200`,
      undefined,
      tenantToken,
    );
    assert.equal(runs.body.deliveries.length, 2, JSON.stringify(runs.body));
  });

  it('a 10,000-character answer arrives as ordered parts cut at paragraphs', async () => {
    const paragraphs = Array.from({ length: 20 }, (_, i) => `${i}:`.padEnd(499, 'x'));
    const long = paragraphs.join('\n\n');
    assert.ok(long.length >= 10_000);
    fake.push(textUpdate(300, long));
    await waitFor('3 parts', () => fake.sent.filter((m) => m.chat_id === '300').length >= 3, {
      timeoutMs: 30_000,
      everyMs: 20,
    });
    const parts = fake.sent.filter((m) => m.chat_id === '300').map((m) => m.text);
    assert.equal(parts.length, 3);
    for (const part of parts) assert.ok(part.length <= 4096);
    assert.equal(parts.join('\n\n'), `echo: ${long}`);
  });

  it('a 502 on the second part: the retry sends the remaining parts, none twice', async () => {
    const long = Array.from({ length: 20 }, (_, i) => `${i}:`.padEnd(499, 'y')).join('\n\n');
    fake.failNextSends(null, { status: 502 });
    fake.push(textUpdate(310, long));
    const parts = await repliesTo(310, 3);
    assert.equal(parts.join('\n\n'), `echo: ${long}`);
    const list = await call(
      keelUrl,
      'GET',
      `/v1/tenants/${TENANT}/deliveries?destination_prefix=tg:310`,
      undefined,
      tenantToken,
    );
    await waitFor('delivered', async () => {
      const now = await call(
        keelUrl,
        'GET',
        `/v1/tenants/${TENANT}/deliveries?destination_prefix=tg:310`,
        undefined,
        tenantToken,
      );
      return now.body.deliveries[0]?.status === 'delivered';
    });
    assert.equal(list.body.deliveries.length, 1);
    assert.equal(fake.sent.filter((m) => m.chat_id === '310').length, 3);
  });

  it('429 retry_after and a 500 are retried: one message shown', async () => {
    fake.failNextSends({ status: 429, retry_after: 1 }, { status: 500 });
    const attemptsBefore = fake.sendAttempts;
    fake.push(textUpdate(400, 'through the storm'));
    const replies = await repliesTo(400, 1);
    assert.deepEqual(replies, ['echo: through the storm']);
    assert.equal(fake.sendAttempts - attemptsBefore, 3);
    process.stdout.write(
      `# send attempts for one message after 429+500: ${fake.sendAttempts - attemptsBefore}\n`,
    );
  });

  it('non-text messages get a polite answer; /new starts a fresh thread; groups need a mention', async () => {
    fake.push({
      message: {
        message_id: 1,
        date: 0,
        chat: { id: 500, type: 'private' },
        from: { id: 500, is_bot: false, first_name: 'Ada' },
        sticker: { file_id: 'x' },
      },
    });
    assert.deepEqual(await repliesTo(500, 1), [NON_TEXT_REPLY]);
    fake.push(textUpdate(500, 'remember me'));
    await repliesTo(500, 2);
    fake.push(textUpdate(500, '/new'));
    assert.equal((await repliesTo(500, 3))[2], NEW_THREAD_REPLY);
    const gone = await call(
      keelUrl,
      'GET',
      `/v1/tenants/${TENANT}/threads/a/${encodeURIComponent('tg:500')}`,
      undefined,
      tenantToken,
    );
    assert.equal(gone.status, 404);

    const group = (text: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
      message: {
        message_id: 7,
        date: 0,
        chat: { id: -600, type: 'group', title: 'g' },
        from: { id: 1, is_bot: false, first_name: 'Ada' },
        text,
        ...extra,
      },
    });
    fake.push(group('chatter between people'));
    fake.push(group(`@${BOT_USER.username} ping`));
    fake.push(
      group('pong?', {
        reply_to_message: {
          message_id: 3,
          date: 0,
          chat: { id: -600, type: 'group', title: 'g' },
          from: BOT_USER,
          text: 'x',
        },
      }),
    );
    const replies = await repliesTo(-600, 2);
    assert.deepEqual(replies.sort(), ['echo: ping', 'echo: pong?']);
  });

  it('an adapter killed between claim and ack shows exactly one message after restart', async () => {
    const held = fake.holdNextSend();
    fake.push(textUpdate(700, 'survive the crash'));
    await held;
    adapter.kill('SIGKILL');
    await new Promise((resolve) => adapter.once('exit', resolve));
    assert.equal(fake.sent.filter((m) => m.chat_id === '700').length, 0);
    adapter = await startAdapter();
    // The claim expires (1.5 s lease) and keel hands the delivery out again.
    await waitFor(
      'the delivery delivered',
      async () => {
        const list = await call(
          keelUrl,
          'GET',
          `/v1/tenants/${TENANT}/deliveries?destination_prefix=tg:700`,
          undefined,
          tenantToken,
        );
        return list.body.deliveries[0]?.status === 'delivered';
      },
      { timeoutMs: 30_000, everyMs: 50 },
    );
    assert.deepEqual(
      fake.sent.filter((m) => m.chat_id === '700').map((m) => m.text),
      ['echo: survive the crash'],
    );
  });

  it('an approval shows Approve/Deny; a press decides it once; a second press is told so', async () => {
    const agent = await call(
      keelUrl,
      'PUT',
      `/v1/tenants/${TENANT}/agents/a`,
      { model: 'fixture/echo', require_approval: ['calc_*'] },
      tenantToken,
    );
    assert.equal(agent.status, 200, JSON.stringify(agent.body));
    fake.push(textUpdate(1000, '@call calc_eval {"expression":"6*7"}\nwhat is 6*7'));
    const question = await waitFor(
      'the approval message',
      () => fake.sent.find((m) => m.chat_id === '1000' && m.reply_markup) ?? null,
      { timeoutMs: 30_000, everyMs: 20 },
    );
    assert.match(question.text, /calc_eval/);
    assert.match(question.text, /6\*7/);
    const buttons = question.reply_markup?.inline_keyboard[0] ?? [];
    assert.deepEqual(
      buttons.map((b) => b.text),
      ['Approve', 'Deny'],
    );
    const messageId = fake.sent.indexOf(question) + 1;
    fake.push(buttonPress(1000, messageId, buttons[0]?.callback_data ?? '', 'press-1'));
    const answered = (id: string) =>
      waitFor(
        `the answer to ${id}`,
        () => fake.callbackAnswers.find((a) => a.callback_query_id === id) ?? null,
      );
    assert.equal((await answered('press-1')).text, APPROVED_REPLY);
    // A second press (here: Deny, after Approve) changes nothing.
    fake.push(buttonPress(1000, messageId, buttons[1]?.callback_data ?? '', 'press-2'));
    assert.equal((await answered('press-2')).text, ALREADY_DECIDED_REPLY);
    assert.ok(fake.markupEdits.some((e) => e.chat_id === '1000' && e.message_id === messageId));
    // The approved call ran and the run answered in the chat.
    await waitFor('the answer after approval', () =>
      fake.sent.some((m) => m.chat_id === '1000' && !m.reply_markup) ? true : null,
    );
    const deliveries = await call(
      keelUrl,
      'GET',
      `/v1/tenants/${TENANT}/deliveries?destination_prefix=tg:1000`,
      undefined,
      tenantToken,
    );
    const kinds = deliveries.body.deliveries.map((d: Json) => d.kind).sort();
    assert.deepEqual(kinds, ['approval', 'result']);
    const runId = deliveries.body.deliveries[0].run_id;
    const approvals = await call(
      keelUrl,
      'GET',
      `/v1/tenants/${TENANT}/runs/${runId}/approvals`,
      undefined,
      tenantToken,
    );
    assert.equal(approvals.body.approvals[0].status, 'approved');
    assert.equal(approvals.body.approvals[0].note, 'by @ada in Telegram');
    const trace = await call(
      keelUrl,
      'GET',
      `/v1/tenants/${TENANT}/runs/${runId}/trace`,
      undefined,
      tenantToken,
    );
    const result = trace.body.events.find((e: Json) => e.type === 'tool.result');
    assert.equal(result?.data.ok, true, JSON.stringify(result));
  });

  it('TELEGRAM_ALLOWED_USERS: a message, /new or button press from a stranger runs nothing', async () => {
    const agent = await call(
      keelUrl,
      'PUT',
      `/v1/tenants/${TENANT}/agents/a`,
      { model: 'fixture/echo', require_approval: ['calc_*'] },
      tenantToken,
    );
    assert.ok([200, 201].includes(agent.status), JSON.stringify(agent.body));
    // An allowed user's call waits for approval, and they talk to the bot in a group.
    fake.push(textUpdate(1100, '@call calc_eval {"expression":"1+1"}\nwhat is 1+1'));
    const question = await waitFor(
      'the approval message',
      () => fake.sent.find((m) => m.chat_id === '1100' && m.reply_markup) ?? null,
      { timeoutMs: 30_000, everyMs: 20 },
    );
    const messageId = fake.sent.indexOf(question) + 1;
    const [approve, deny] = question.reply_markup?.inline_keyboard[0] ?? [];
    const group = (fromId: number, text: string): Record<string, unknown> => ({
      message: {
        message_id: 9,
        date: 0,
        chat: { id: -1200, type: 'group', title: 'g' },
        from: { id: fromId, is_bot: false, first_name: 'Eve' },
        text,
      },
    });
    fake.push(group(1100, `@${BOT_USER.username} hello group`));
    assert.deepEqual(await repliesTo(-1200, 1), ['echo: hello group']);

    // Strangers: a private message, a mention and a /new in the group, an Approve press.
    const sentBefore = fake.sent.length;
    fake.push(textUpdate(666, 'let me in'));
    fake.push(group(667, `@${BOT_USER.username} run my errand`));
    fake.push(group(667, `/new@${BOT_USER.username}`));
    const last = fake.push(
      buttonPress(1100, messageId, approve?.callback_data ?? '', 'press-stranger', 666),
    );
    const answer = await waitFor(
      'the answer to the stranger',
      () => fake.callbackAnswers.find((a) => a.callback_query_id === 'press-stranger') ?? null,
    );
    await waitFor("the strangers' updates confirmed", () => fake.confirmedOffset > last);
    const approvals = async () => {
      const deliveries = await call(
        keelUrl,
        'GET',
        `/v1/tenants/${TENANT}/deliveries?destination_prefix=tg:1100`,
        undefined,
        tenantToken,
      );
      const runId = deliveries.body.deliveries[0].run_id;
      return (
        await call(
          keelUrl,
          'GET',
          `/v1/tenants/${TENANT}/runs/${runId}/approvals`,
          undefined,
          tenantToken,
        )
      ).body.approvals;
    };
    const strangerRuns = await call(
      keelUrl,
      'GET',
      `/v1/tenants/${TENANT}/deliveries?destination_prefix=tg:666`,
      undefined,
      tenantToken,
    );
    const groupThread = await call(
      keelUrl,
      'GET',
      `/v1/tenants/${TENANT}/threads/a/${encodeURIComponent('tg:-1200')}`,
      undefined,
      tenantToken,
    );
    const pending = (await approvals())[0]?.status;
    process.stdout.write(
      `strangers: 4 updates; turns=${strangerRuns.body.deliveries.length} ` +
        `group_thread_turns=${groupThread.body.turns} approval=${pending} ` +
        `messages_sent=${fake.sent.length - sentBefore} button_answer="${answer.text}"\n`,
    );
    assert.deepEqual(strangerRuns.body.deliveries, []);
    assert.equal(groupThread.status, 200, "a stranger's /new deleted the group thread");
    assert.equal(groupThread.body.turns, 1, "a stranger's mention made a turn");
    assert.equal(pending, 'pending');
    assert.equal(answer.text, NOT_ALLOWED_BUTTON_REPLY);
    assert.equal(fake.sent.length, sentBefore, 'nothing sent to strangers');

    // The owner still decides.
    fake.push(buttonPress(1100, messageId, deny?.callback_data ?? '', 'press-owner'));
    await waitFor(
      "the owner's answer",
      () => fake.callbackAnswers.find((a) => a.callback_query_id === 'press-owner') ?? null,
    ).then((owner) => assert.equal(owner.text, DENIED_REPLY));
    assert.equal((await approvals())[0]?.status, 'denied');
  });

  it('webhook mode: updates with the secret header become turns; a wrong secret is 401', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const hook = await startAdapter({
      TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/tg`,
      TELEGRAM_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
      TELEGRAM_WEBHOOK_SECRET: 'hook-secret_1',
    });
    try {
      assert.deepEqual(fake.webhook, {
        url: `http://127.0.0.1:${port}/tg`,
        secret_token: 'hook-secret_1',
      });
      assert.equal(await fake.pushToWebhook(textUpdate(801, 'forged'), 'wrong'), 401);
      // A stranger's update is taken (200: Telegram must not send it again) and runs nothing.
      assert.equal(await fake.pushToWebhook(textUpdate(802, 'stranger via webhook')), 200);
      assert.equal(await fake.pushToWebhook(textUpdate(800, 'via webhook')), 200);
      assert.deepEqual(await repliesTo(800, 1), ['echo: via webhook']);
      const stranger = await call(
        keelUrl,
        'GET',
        `/v1/tenants/${TENANT}/deliveries?destination_prefix=tg:802`,
        undefined,
        tenantToken,
      );
      assert.deepEqual(stranger.body.deliveries, []);
      const forged = await call(
        keelUrl,
        'GET',
        `/v1/tenants/${TENANT}/deliveries?destination_prefix=tg:801`,
        undefined,
        tenantToken,
      );
      assert.deepEqual(forged.body.deliveries, []);
    } finally {
      hook.kill('SIGKILL');
    }
  });

  it('an update is confirmed only after keel accepted its turn; a refused one is answered', async () => {
    adapter.kill('SIGKILL');
    await new Promise((resolve) => adapter.once('exit', resolve));
    // An adapter whose keel is unreachable: the update is fetched again and again.
    const offline = spawnChild(['adapters/telegram/src/main.ts', '--agent', 'a'], {
      KEEL_URL: 'http://127.0.0.1:9',
      KEEL_TOKEN: tenantToken,
      KEEL_TENANT: TENANT,
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.url,
      TELEGRAM_ALLOWED_USERS: ALLOWED_USERS,
    });
    await readyLine(offline, /serving agent a/);
    const id = fake.push(textUpdate(900, 'keel is away'));
    await waitFor('the update handed out twice', () => (fake.handedOut.get(id) ?? 0) >= 2, {
      timeoutMs: 30_000,
      everyMs: 20,
    });
    assert.ok(fake.confirmedOffset <= id, `offset ${fake.confirmedOffset} passed update ${id}`);
    offline.kill('SIGKILL');
    await new Promise((resolve) => offline.once('exit', resolve));
    adapter = await startAdapter();
    assert.deepEqual(await repliesTo(900, 1), ['echo: keel is away']);
    await waitFor('the update confirmed', () => fake.confirmedOffset > id);

    // An agent keel does not know: 404 is final, so the bot says so and moves on.
    const wrongAgent = spawnChild(['adapters/telegram/src/main.ts', '--agent', 'nobody'], {
      KEEL_URL: keelUrl,
      KEEL_TOKEN: tenantToken,
      KEEL_TENANT: TENANT,
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.url,
      TELEGRAM_ALLOWED_USERS: ALLOWED_USERS,
    });
    adapter.kill('SIGKILL');
    await new Promise((resolve) => adapter.once('exit', resolve));
    await readyLine(wrongAgent, /serving agent nobody/);
    const refused = fake.push(textUpdate(901, 'to nobody'));
    assert.deepEqual(await repliesTo(901, 1), [`${REFUSED_REPLY} (AGENT_NOT_FOUND)`]);
    await waitFor('the refused update confirmed', () => fake.confirmedOffset > refused);
    wrongAgent.kill('SIGKILL');
  });
});

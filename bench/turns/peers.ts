// The peers of the turn benchmark, installed in bench/peers/ with their own pinned
// package.json and node_modules (`npm run bench:peers-install`), never keel's
// dependencies: the LangGraph.js API server with a ReAct graph on @langchain/openai, and
// a Mastra server with its LibSQL storage — both pointed at the same `keel fixture-model`
// server, both given the clock_now tool the fixture script calls.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startChild, stopChild } from './children.ts';
import { ROOT, cleanEnv, type NodeCommand, type Running } from './contenders.ts';
import { RUNNING_NODE, nodeCommandFor } from './node-runtimes.ts';

export type PeerName = 'langgraph' | 'mastra';

const PEERS_DIR = join(ROOT, 'bench/peers');

export function peersInstalled(): { names: PeerName[]; missing: string | null } {
  if (!existsSync(join(PEERS_DIR, 'node_modules')))
    return {
      names: [],
      missing: 'bench/peers/node_modules is absent: npm run bench:peers-install',
    };
  return { names: ['langgraph', 'mastra'], missing: null };
}

const SCRIPTS: Record<PeerName, { script: string; durable: string }> = {
  langgraph: {
    script: 'langgraph-server.mjs',
    durable: 'nothing (in-memory checkpointer, flushed to a file at intervals)',
  },
  mastra: { script: 'mastra-server.mjs', durable: 'messages in LibSQL (file)' },
};

/** `workers`: runs LangGraph.js's API server executes at once (its queue's workers). */
export async function startPeer(
  peer: PeerName,
  dir: string,
  modelUrl: string,
  options: NodeCommand & { workers?: number } = {},
): Promise<Running & { durable: string }> {
  const { script, durable } = SCRIPTS[peer];
  const [command, args] = nodeCommandFor(options.node ?? RUNNING_NODE, [
    ...(options.nodeFlags ?? []),
    join(PEERS_DIR, script),
    dir,
    `${modelUrl}/v1`,
  ]);
  const child = await startChild(command, args, {
    env: cleanEnv({
      OPENAI_API_KEY: 'fixture',
      LANGSMITH_TRACING: 'false',
      NODE_ENV: 'production',
      PEER_WORKERS: String(options.workers ?? 64),
      ...options.env,
    }),
    cwd: PEERS_DIR,
    ready: /peer listening on (\S+)/,
  });
  return {
    kind: peer,
    url: child.ready,
    durable,
    pids: () => [child.pid],
    stop: () => stopChild(child),
  };
}

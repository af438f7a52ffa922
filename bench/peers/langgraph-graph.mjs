// The LangGraph.js peer's graph: a prebuilt ReAct agent on @langchain/openai's ChatOpenAI,
// pointed at the `keel fixture-model` server (FIXTURE_BASE_URL), with the clock_now tool
// the fixture script calls.

import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

const clockNow = tool(async () => JSON.stringify({ now: new Date().toISOString() }), {
  name: 'clock_now',
  description: 'The current time (UTC, ISO 8601).',
  schema: z.object({}),
});

const model = new ChatOpenAI({
  model: 'fixture',
  apiKey: 'fixture',
  configuration: { baseURL: process.env.FIXTURE_BASE_URL },
  temperature: 0.2,
});

export const graph = createReactAgent({ llm: model, tools: [clockNow] });

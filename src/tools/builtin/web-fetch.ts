import { z } from 'zod';
import { WebError } from '../../web/errors.ts';
import { defineTool, ToolError } from '../tool.ts';
import type { WebPort } from './web-port.ts';

export function webPort(ports: { web?: WebPort }): WebPort {
  if (!ports.web) throw new ToolError('WEB_UNAVAILABLE', 'the web is not available here');
  return ports.web;
}

/** Web failures carry a stable code (WEB_…); the model sees it as a tool error. */
export async function asWebToolErrors<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof WebError) throw new ToolError(error.code, error.message);
    throw error;
  }
}

export const webFetchTool = defineTool({
  name: 'web_fetch',
  family: 'web',
  effect: 'read_only',
  description:
    'Fetch a public http(s) page and return its title and readable text (at most 1 MiB; text content only). Private and local addresses are refused.',
  input: z.strictObject({ url: z.string().min(1).max(4096).describe('an http or https URL') }),
  run: async ({ url }, context) => {
    const page = await asWebToolErrors(() => webPort(context.ports).fetch(url, context.signal));
    return { ...page };
  },
});

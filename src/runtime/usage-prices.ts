// Prices per model ([providers.<name>.prices] in keel.toml, USD per million input and
// output tokens) and the cost of one model call. A model without a price costs 0.

import type { Metrics } from '../metrics.ts';

/** USD per million tokens. */
export type ModelPrice = { input: number; output: number };

/** The price of "provider/model", or null when keel.toml names none. */
export type PriceBook = (modelRef: string) => ModelPrice | null;

export function priceBook(
  providers: Readonly<Record<string, { prices?: Record<string, ModelPrice> | undefined }>>,
): PriceBook {
  const prices = new Map<string, ModelPrice>();
  for (const [name, provider] of Object.entries(providers)) {
    for (const [model, price] of Object.entries(provider.prices ?? {})) {
      prices.set(`${name}/${model}`, price);
    }
  }
  return (modelRef) => prices.get(modelRef) ?? null;
}

/** The USD cost of a call's usage at `price` (0 without one). */
export function costOf(
  price: ModelPrice | null | undefined,
  usage: { input_tokens: number; output_tokens: number },
): number {
  if (!price) return 0;
  return (usage.input_tokens * price.input + usage.output_tokens * price.output) / 1_000_000;
}

/** The model.response event's usage fields: which model, what it cost. */
export function pricedUsage(
  prices: PriceBook | undefined,
  model: string,
  usage: { input_tokens: number; output_tokens: number },
): { model: string; cost_usd: number } {
  return { model, cost_usd: costOf(prices?.(model), usage) };
}

/** The Prometheus counters of a recorded response (after its checkpoint committed). */
export function countUsage(
  metrics: Metrics,
  model: string,
  usage: { input_tokens: number; output_tokens: number },
  costUsd: number,
): void {
  metrics.modelTokens.inc({ model, kind: 'input' }, usage.input_tokens);
  metrics.modelTokens.inc({ model, kind: 'output' }, usage.output_tokens);
  if (costUsd > 0) metrics.modelCostUsd.inc({ model }, costUsd);
}

// The turn benchmark's summary when it runs the contenders on more than one Node
// (KEEL_BENCH_NODES): every ratio is taken within a round — the two Nodes' trials of one
// contender run back to back, and a contender is set against keel in the same round on
// the same Node — then the median of the rounds, as absolute ms drift with the load of a
// shared machine.

import { formatTable } from '../support.ts';
import type { NodeRuntime } from './node-runtimes.ts';

export interface RoundRow {
  /** The contender's name without the Node suffix. */
  contender: string;
  /** The Node's version it ran on. */
  node: string;
  round: number;
  serverCpuMsPerTurn: number;
}

/** The middle value; with an even count, the mean of the two middle ones (2 rounds: their mean). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[half] as number)
    : ((sorted[half - 1] as number) + (sorted[half] as number)) / 2;
}

/** The contender the others are set against. */
export const REFERENCE = 'keel full, model over HTTP';

function cpu(
  rows: readonly RoundRow[],
  contender: string,
  node: string,
  round: number,
): number | undefined {
  return rows.find((row) => row.contender === contender && row.node === node && row.round === round)
    ?.serverCpuMsPerTurn;
}

/** `numerator ÷ denominator` per round where both were measured. */
function ratios(
  rows: readonly RoundRow[],
  numerator: [contender: string, node: string],
  denominator: [contender: string, node: string],
): number[] {
  const rounds = [...new Set(rows.map((row) => row.round))].sort((a, b) => a - b);
  const found: number[] = [];
  for (const round of rounds) {
    const top = cpu(rows, ...numerator, round);
    const bottom = cpu(rows, ...denominator, round);
    if (top !== undefined && bottom !== undefined && bottom > 0) found.push(top / bottom);
  }
  return found;
}

const listed = (values: number[], digits = 2): string =>
  values.length === 0
    ? '–'
    : `${values.map((value) => value.toFixed(digits)).join(', ')} (median ${median(values).toFixed(digits)})`;

export function printNodeComparison(
  rows: readonly RoundRow[],
  nodes: readonly NodeRuntime[],
): void {
  const contenders = [...new Set(rows.map((row) => row.contender))];
  const [first, ...others] = nodes.map((node) => node.version);
  if (first === undefined) return;
  const perNode = (contender: string, node: string): number[] =>
    rows
      .filter((row) => row.contender === contender && row.node === node)
      .map((row) => row.serverCpuMsPerTurn);

  console.log(`\nserver CPU ms/turn per round, by Node; the ratio to Node ${first} per round\n`);
  console.log(
    formatTable(
      [
        'contender',
        ...nodes.map((node) => `Node ${node.version}`),
        ...others.map((node) => `Node ${node} ÷ Node ${first}`),
      ],
      contenders.map((contender) => [
        contender,
        ...nodes.map((node) => listed(perNode(contender, node.version))),
        ...others.map((node) => listed(ratios(rows, [contender, node], [contender, first]), 3)),
      ]),
    ),
  );

  if (!contenders.includes(REFERENCE)) return;
  console.log(`\nserver CPU ÷ that of "${REFERENCE}" on the same Node in the same round\n`);
  console.log(
    formatTable(
      ['contender', ...nodes.map((node) => `Node ${node.version}`)],
      contenders
        .filter((contender) => contender !== REFERENCE)
        .map((contender) => [
          contender,
          ...nodes.map((node) =>
            listed(ratios(rows, [contender, node.version], [REFERENCE, node.version])),
          ),
        ]),
    ),
  );
}

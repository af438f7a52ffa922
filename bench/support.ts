// Shared measuring helpers: medians, percentiles, bytes written by this process.

import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[index] as number;
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/** Bytes this process passed to write syscalls so far (`wchar` of /proc/self/io). */
export function bytesWritten(): number {
  const match = /^wchar:\s+(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
  return match ? Number(match[1]) : NaN;
}

export function nowMs(): number {
  return performance.now();
}

export function formatTable(headers: string[], rows: (string | number)[][]): string {
  const cells = [
    headers,
    ...rows.map((row) => row.map((cell) => (typeof cell === 'number' ? formatNumber(cell) : cell))),
  ];
  const widths = headers.map((_, column) =>
    Math.max(...cells.map((row) => String(row[column] ?? '').length)),
  );
  const line = (row: (string | number)[]): string =>
    `| ${row.map((cell, column) => String(cell).padStart(widths[column] as number)).join(' | ')} |`;
  return [
    line(headers),
    `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
    ...cells.slice(1).map(line),
  ].join('\n');
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value) || Number.isInteger(value)) return String(value);
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 1) return value.toFixed(2);
  return value.toFixed(4);
}

export function writeResult(name: string, result: unknown): string {
  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.json`);
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

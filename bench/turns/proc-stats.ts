// What a process has used so far, read from /proc (Linux): CPU time (user + system, in
// ms, from /proc/<pid>/stat), bytes it caused to be written to storage (write_bytes of
// /proc/<pid>/io) and its resident set (VmRSS / VmHWM of /proc/<pid>/status). The turn
// benchmark reads them before and after the load, from outside the measured process.

import { readFileSync } from 'node:fs';

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat (100 on every Linux we run on). */
const TICKS_PER_S = 100;

export interface ProcSample {
  cpuMs: number;
  writeBytes: number;
  rssBytes: number;
  hwmBytes: number;
}

function statCpuMs(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / TICKS_PER_S;
}

function ioField(pid: number, name: string): number {
  try {
    const match = new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(
      readFileSync(`/proc/${pid}/io`, 'utf8'),
    );
    return match ? Number(match[1]) : NaN;
  } catch {
    return NaN;
  }
}

function statusKiB(pid: number, name: string): number {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(
    readFileSync(`/proc/${pid}/status`, 'utf8'),
  );
  return match ? Number(match[1]) * 1024 : NaN;
}

export function sampleProc(pid: number): ProcSample {
  return {
    cpuMs: statCpuMs(pid),
    writeBytes: ioField(pid, 'write_bytes'),
    rssBytes: statusKiB(pid, 'VmRSS'),
    hwmBytes: statusKiB(pid, 'VmHWM'),
  };
}

/** Sums samples of several processes (PostgreSQL backends, a server and its children). */
export function sampleProcs(pids: readonly number[]): ProcSample {
  const total: ProcSample = { cpuMs: 0, writeBytes: 0, rssBytes: 0, hwmBytes: 0 };
  for (const pid of pids) {
    try {
      const sample = sampleProc(pid);
      total.cpuMs += sample.cpuMs;
      total.writeBytes += sample.writeBytes;
      total.rssBytes += sample.rssBytes;
      total.hwmBytes += sample.hwmBytes;
    } catch {
      // Exited between listing and reading: its time is lost to the sum, as /proc has it.
    }
  }
  return total;
}

/** The pid and every descendant of it (from /proc/<pid>/task/<pid>/children). */
export function processTree(pid: number): number[] {
  const pids = [pid];
  for (let index = 0; index < pids.length; index++) {
    try {
      const children = readFileSync(
        `/proc/${pids[index]}/task/${pids[index]}/children`,
        'utf8',
      ).trim();
      if (children) pids.push(...children.split(/\s+/).map(Number));
    } catch {
      // gone
    }
  }
  return pids;
}

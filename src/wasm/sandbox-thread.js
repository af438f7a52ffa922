// One sandbox worker thread (docs/wasm-tools.md): runs one call at a time, each in a
// fresh instance of the tool's compiled module with fresh WASI state. Plain JavaScript
// on purpose: a worker thread does not inherit the tsx loader that `bin/keel.js`
// registers in the main thread, so this file must run on bare Node.
//
// keel's own WASI preview-1 shim (not node:wasi: its imports are fast C++ calls that
// terminate() cannot interrupt, and its stdio are real host fds). stdin is the call's
// envelope in memory, stdout/stderr are capped in-memory buffers, argv = ["tool"], the
// environment is empty, no directory is preopened; clocks, random and sleeping (bounded
// by the deadline) work, every other import answers ENOSYS. The host thread enforces
// the wall-clock limit by terminating this thread; the checks here only end a call
// sooner and give it the right status.

import { parentPort } from 'node:worker_threads';
import { getRandomValues } from 'node:crypto';

const ERRNO = {
  SUCCESS: 0,
  BADF: 8,
  FAULT: 21,
  INVAL: 28,
  NOSYS: 52,
  SPIPE: 70,
  NOTCAPABLE: 76,
};
const STDERR_CAP = 4096;
const STDIO = [0, 1, 2];
/** POSIX's IOV_MAX: more iovecs in one call is EINVAL (else a guest sizes a host array). */
const IOV_MAX = 1024;

class ProcExit extends Error {}
class DeadlineReached extends Error {}
/** Thrown by fd_write past max_output_bytes: the call ends at the first write over the cap. */
class OutputOverflow extends Error {}
class TooManyIovecs extends Error {}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function now(clock) {
  if (clock === 0) return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
  return process.hrtime.bigint();
}

/** The imports of one call, and what the call did. */
function createShim(input, maxOutput, deadline) {
  const state = {
    memory: null,
    exitCode: null,
    // One buffer, doubled as needed up to max_output_bytes: a guest writing one byte at a
    // time must not cost the worker's heap an object per write.
    stdout: new Uint8Array(Math.min(maxOutput, 65_536)),
    stdoutBytes: 0,
    stderr: '',
    overflow: false,
    deadline: false,
    closed: new Set(),
    inputAt: 0,
  };
  const view = () => new DataView(state.memory.buffer);
  const bytes = () => new Uint8Array(state.memory.buffer);
  const iovecs = (iovs, count) => {
    if (count > IOV_MAX) throw new TooManyIovecs('iovecs');
    const dv = view();
    const list = [];
    for (let i = 0; i < count; i++) {
      list.push([dv.getUint32(iovs + i * 8, true), dv.getUint32(iovs + i * 8 + 4, true)]);
    }
    return list;
  };
  const open = (fd) => STDIO.includes(fd) && !state.closed.has(fd);
  const checkDeadline = () => {
    if (Date.now() >= deadline) {
      state.deadline = true;
      throw new DeadlineReached('deadline');
    }
  };

  const calls = {
    args_sizes_get(argc, size) {
      view().setUint32(argc, 1, true);
      view().setUint32(size, 5, true);
      return ERRNO.SUCCESS;
    },
    args_get(argv, buf) {
      view().setUint32(argv, buf, true);
      bytes().set([0x74, 0x6f, 0x6f, 0x6c, 0], buf);
      return ERRNO.SUCCESS;
    },
    environ_sizes_get(count, size) {
      view().setUint32(count, 0, true);
      view().setUint32(size, 0, true);
      return ERRNO.SUCCESS;
    },
    environ_get: () => ERRNO.SUCCESS,
    clock_res_get(clock, out) {
      if (clock < 0 || clock > 3) return ERRNO.INVAL;
      view().setBigUint64(out, 1000n, true);
      return ERRNO.SUCCESS;
    },
    clock_time_get(clock, _precision, out) {
      if (clock < 0 || clock > 3) return ERRNO.INVAL;
      view().setBigUint64(out, now(clock), true);
      return ERRNO.SUCCESS;
    },
    random_get(buf, length) {
      const target = bytes();
      for (let at = 0; at < length; at += 65_536) {
        getRandomValues(target.subarray(buf + at, buf + Math.min(length, at + 65_536)));
      }
      return ERRNO.SUCCESS;
    },
    fd_read(fd, iovs, count, nread) {
      if (fd !== 0 || !open(fd)) return ERRNO.BADF;
      let read = 0;
      const target = bytes();
      for (const [ptr, len] of iovecs(iovs, count)) {
        const chunk = input.subarray(state.inputAt, state.inputAt + len);
        target.set(chunk, ptr);
        state.inputAt += chunk.length;
        read += chunk.length;
        if (chunk.length < len) break;
      }
      view().setUint32(nread, read, true);
      return ERRNO.SUCCESS;
    },
    fd_write(fd, iovs, count, nwritten) {
      if ((fd !== 1 && fd !== 2) || !open(fd)) return ERRNO.BADF;
      // After proc_exit (caught by the guest), nothing it writes counts.
      if (state.exitCode !== null) return ERRNO.BADF;
      let written = 0;
      const source = bytes();
      for (const [ptr, len] of iovecs(iovs, count)) {
        if (ptr + len > source.length) return ERRNO.FAULT;
        if (fd === 1) {
          if (state.stdoutBytes + len > maxOutput) {
            state.overflow = true;
            throw new OutputOverflow('overflow');
          }
          if (state.stdoutBytes + len > state.stdout.length) {
            let size = state.stdout.length * 2;
            while (size < state.stdoutBytes + len) size *= 2;
            const grown = new Uint8Array(Math.min(size, maxOutput));
            grown.set(state.stdout.subarray(0, state.stdoutBytes));
            state.stdout = grown;
          }
          state.stdout.set(source.subarray(ptr, ptr + len), state.stdoutBytes);
          state.stdoutBytes += len;
        } else if (state.stderr.length < STDERR_CAP) {
          state.stderr += Buffer.from(source.subarray(ptr, ptr + len)).toString('utf8');
          state.stderr = state.stderr.slice(0, STDERR_CAP);
        }
        written += len;
      }
      view().setUint32(nwritten, written, true);
      return ERRNO.SUCCESS;
    },
    fd_fdstat_get(fd, out) {
      if (!open(fd)) return ERRNO.BADF;
      const dv = view();
      // Filetype 0 (unknown), so a libc buffers fully instead of line by line.
      for (let i = 0; i < 24; i++) dv.setUint8(out + i, 0);
      dv.setBigUint64(out + 8, 0xffffffffn, true);
      return ERRNO.SUCCESS;
    },
    fd_close(fd) {
      if (!open(fd)) return ERRNO.BADF;
      state.closed.add(fd);
      return ERRNO.SUCCESS;
    },
    fd_seek: (fd) => (open(fd) ? ERRNO.SPIPE : ERRNO.BADF),
    fd_tell: (fd) => (open(fd) ? ERRNO.SPIPE : ERRNO.BADF),
    // EBADF for every fd: a libc scanning for preopened directories finds none.
    fd_prestat_get: () => ERRNO.BADF,
    fd_prestat_dir_name: () => ERRNO.BADF,
    path_open: () => ERRNO.NOTCAPABLE,
    proc_exit(code) {
      if (state.exitCode === null) state.exitCode = code;
      throw new ProcExit(`exit ${code}`);
    },
    sched_yield: () => ERRNO.SUCCESS,
    poll_oneoff(subs, events, count, nevents) {
      const dv = view();
      let sleepNs = null;
      for (let i = 0; i < count; i++) {
        const sub = subs + i * 48;
        if (dv.getUint8(sub + 8) !== 0) continue;
        const clock = dv.getUint32(sub + 16, true);
        let timeout = dv.getBigUint64(sub + 24, true);
        if ((dv.getUint16(sub + 40, true) & 1) === 1) timeout -= now(clock === 0 ? 0 : 1);
        if (timeout < 0n) timeout = 0n;
        if (sleepNs === null || timeout < sleepNs) sleepNs = timeout;
      }
      if (sleepNs !== null) {
        const sleepMs = Number(sleepNs / 1_000_000n);
        if (Date.now() + sleepMs >= deadline) {
          Atomics.wait(sleeper, 0, 0, Math.max(0, deadline - Date.now()));
          state.deadline = true;
          throw new DeadlineReached('deadline');
        }
        if (sleepMs > 0) Atomics.wait(sleeper, 0, 0, sleepMs);
      }
      // Every subscription is ready: stdin is at EOF or has data, stdout always takes data.
      for (let i = 0; i < count; i++) {
        const event = events + i * 32;
        dv.setBigUint64(event, dv.getBigUint64(subs + i * 48, true), true);
        dv.setUint16(event + 8, 0, true);
        dv.setUint8(event + 10, dv.getUint8(subs + i * 48 + 8));
        for (let b = 11; b < 32; b++) dv.setUint8(event + b, 0);
      }
      dv.setUint32(nevents, count, true);
      return ERRNO.SUCCESS;
    },
  };

  const imports = (module) => {
    const wasi = {};
    for (const entry of WebAssembly.Module.imports(module)) {
      const call = calls[entry.name];
      wasi[entry.name] = (...args) => {
        checkDeadline();
        if (!call) return ERRNO.NOSYS;
        try {
          return call(...args);
        } catch (error) {
          // A guest pointer out of bounds.
          if (error instanceof RangeError) return ERRNO.FAULT;
          if (error instanceof TooManyIovecs) return ERRNO.INVAL;
          throw error;
        }
      };
    }
    return { wasi_snapshot_preview1: wasi };
  };
  return { state, imports };
}

function run(job) {
  const { state, imports } = createShim(job.input, job.maxOutput, Date.now() + job.timeoutMs);
  let trap = null;
  try {
    const instance = new WebAssembly.Instance(job.module, imports(job.module));
    state.memory = instance.exports.memory;
    instance.exports._start();
  } catch (error) {
    const ended =
      error instanceof ProcExit ||
      error instanceof DeadlineReached ||
      error instanceof OutputOverflow;
    if (!ended) {
      trap = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
  }
  const outcome = {
    id: job.id,
    exitCode: state.exitCode ?? (trap === null && !state.deadline ? 0 : null),
    trap: state.deadline ? null : trap,
    deadline: state.deadline,
    overflow: state.overflow,
    stderr: state.stderr,
    memoryBytes: state.memory ? state.memory.buffer.byteLength : 0,
    output: undefined,
    badOutput: null,
  };
  if (!outcome.deadline && !outcome.overflow && outcome.trap === null && outcome.exitCode === 0) {
    const text = Buffer.from(state.stdout.buffer, 0, state.stdoutBytes).toString('utf8');
    try {
      outcome.output = JSON.parse(text);
    } catch (error) {
      outcome.badOutput = `${error.message}; stdout began ${JSON.stringify(text.slice(0, 80))}`;
    }
  }
  return outcome;
}

parentPort.on('message', (job) => {
  parentPort.postMessage(run(job));
});
// Ready for calls: the host starts a call's clock only from here.
parentPort.postMessage({ ready: true });

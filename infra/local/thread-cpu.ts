/**
 * The CPU time one thread of this process has used, read from Linux's /proc (ADR 0142): how the
 * supervisor tells a statement that ignores its cancel (its thread keeps computing) from one that
 * is only slow to be scheduled on a busy machine (its thread gets no CPU to reach its interrupt
 * check). Elsewhere than Linux nothing is known (0 and undefined), and the wall-clock grace alone
 * decides, as before.
 */
import { readFileSync, readlinkSync } from 'node:fs';

/**
 * /proc counts a thread's time in USER_HZ ticks, 100 a second on every architecture Node runs on
 * (proc(5): "divide by sysconf(_SC_CLK_TCK)", which is USER_HZ).
 */
const MS_PER_TICK = 10;

/** The calling thread's id in the kernel (its `/proc/self/task/<tid>`), or 0 when unknown. */
export function currentThreadId(): number {
  try {
    // "<pid>/task/<tid>"
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isSafeInteger(tid) && tid > 0 ? tid : 0;
  } catch {
    return 0;
  }
}

/** User plus system CPU ms of thread `tid` of this process; undefined when it can't be read. */
export function threadCpuMs(tid: number): number | undefined {
  if (!(tid > 0)) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // "tid (comm) state ppid …": comm may hold spaces and parentheses, so count from its last ')'.
  // After it, field 3 (state) is the first; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(ticks) ? ticks * MS_PER_TICK : undefined;
}

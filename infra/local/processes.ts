/** Whether a process runs, for files named after the process that owns them (locks, build dirs). */

/**
 * Whether a process with this id runs: signal 0 checks without sending anything. A process of
 * another user (EPERM) runs; only "no such process" (ESRCH) says it has ended.
 */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

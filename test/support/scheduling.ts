import { readFileSync } from 'node:fs';

/** A thread's CPUs and scheduling policy (Linux: SCHED_OTHER 0, SCHED_IDLE 5). */
export interface Scheduling {
  cpus: number[];
  policy: number;
}
export const SCHED_OTHER = 0;
export const SCHED_IDLE = 5;

/**
 * A thread's (or a process's main thread's) Scheduling, from its /proc folder: the CPUs of its
 * `Cpus_allowed_list` (`0-3,8`) and the 41st field of its stat. Build scripts run its source too, so it
 * names nothing outside itself.
 */
export function schedulingIn(dir: string, read: (file: string, encoding: 'utf8') => string): Scheduling {
  const list = /^Cpus_allowed_list:\s*(\S+)$/m.exec(read(`${dir}/status`, 'utf8'))![1];
  const cpus = list.split(',').flatMap((part) => {
    const [first, last = first] = part.split('-').map(Number);
    return Array.from({ length: last - first + 1 }, (_, i) => first + i);
  });
  const stat = read(`${dir}/stat`, 'utf8');
  return { cpus, policy: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]) };
}
export const schedulingOf = (dir: string) => schedulingIn(dir, readFileSync);

/** Where a launcher that spares a CPU puts builds, given the CPUs the daemon may use. */
export const withBuilds = (allowed: number[]): Scheduling =>
  allowed.length > 1
    ? { cpus: allowed.slice(1), policy: SCHED_IDLE }
    : { cpus: allowed, policy: SCHED_OTHER };

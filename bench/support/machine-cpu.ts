import { readFileSync } from 'node:fs';

/** The unit of CPU times in /proc, fixed by the Linux ABI. */
const USER_HZ = 100;

/**
 * CPU time all cores of the machine spent busy so far, or undefined where /proc is missing: on a shared
 * machine, what is left after the benchmark's own processes is load from others, which skews a run.
 */
export function machineBusySeconds(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  // The first line sums all cores: user nice system idle iowait irq softirq steal ...
  const [user, nice, system, , , irq, softirq, steal] = stat.split('\n')[0].split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + steal) / USER_HZ;
}

/**
 * Resolves once the machine used less than a fifth of a core over two seconds (at most after
 * `timeoutMs`): the daemon's model builds run in processes of their own after a load.
 */
export async function waitForIdle(timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let before = machineBusySeconds();
  while (before !== undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = machineBusySeconds()!;
    if (after - before < 0.4) return;
    before = after;
  }
}

import { Command } from '@oclif/core';
import { MODEL_NAMES } from '../../artifacts/layout.js';
import { buildFlags, runBuilds } from './run-builds.js';

export default class BuildAll extends Command {
  static override summary = 'Build every model of each tenant from its lake (for cron)';
  static override description =
    'Exports the lake, then builds co-occurrence, EASE, factors and vectors into new artifact versions; a daemon on the same data dir swaps them in.';
  static override examples = ['<%= config.bin %> build all --tenant acme --data-dir ./data'];
  static override flags = buildFlags;

  async run(): Promise<void> {
    const { flags } = await this.parse(BuildAll);
    await runBuilds(this, flags, MODEL_NAMES);
  }
}

import { Command } from '@oclif/core';

import { buildFlags, runBuilds } from './run-builds.js';

export default class BuildFactors extends Command {
  static override description = 'Build the ALS factors of each tenant from its lake';
  static override examples = ['<%= config.bin %> build factors --tenant acme --data-dir ./data'];
  static override flags = buildFlags;

  async run(): Promise<void> {
    const { flags } = await this.parse(BuildFactors);
    await runBuilds(this, flags, ['factors']);
  }
}

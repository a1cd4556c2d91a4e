import { Command } from '@oclif/core';

import { buildFlags, runBuilds } from './run-builds.js';

export default class BuildCooccurrence extends Command {
  static override description = 'Build the co-occurrence neighbours of each tenant from its lake';
  static override examples = ['<%= config.bin %> build cooccurrence --tenant acme --data-dir ./data'];
  static override flags = buildFlags;

  async run(): Promise<void> {
    const { flags } = await this.parse(BuildCooccurrence);
    await runBuilds(this, flags, ['cooccurrence']);
  }
}

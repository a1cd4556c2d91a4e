import { Command } from '@oclif/core';

import { buildFlags, runBuilds } from './run-builds.js';

export default class BuildEase extends Command {
  static override description = 'Build the EASE item weights of each tenant from its lake';
  static override examples = ['<%= config.bin %> build ease --tenant acme --data-dir ./data'];
  static override flags = buildFlags;

  async run(): Promise<void> {
    const { flags } = await this.parse(BuildEase);
    await runBuilds(this, flags, ['ease']);
  }
}

import { Command, Flags } from '@oclif/core';
import { exportLake } from '../build/run-builds.js';
import { storeFlags, storePlace } from '../flags.js';

export default class LakeExport extends Command {
  static override summary = 'Export what the store committed to the lake (Parquet)';
  static override description =
    'Writes Parquet files under <data-dir>/lake (`nextrec build` exports first by itself). Works through a daemon running on the data dir, or on the store when none runs.';
  static override examples = ['<%= config.bin %> lake export --tenant acme --data-dir ./data'];
  static override flags = {
    tenant: Flags.string({ description: 'export this tenant only (default: every tenant)' }),
    ...storeFlags,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(LakeExport);
    const tenants = await exportLake(storePlace(flags), flags.tenant).catch((error: Error) =>
      this.error(error.message, { exit: 1 }),
    );
    this.log(`exported ${tenants.length} tenant${tenants.length === 1 ? '' : 's'}: ${tenants.join(', ')}`);
  }
}

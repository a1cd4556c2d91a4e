import { Flags } from '@oclif/core';

export const dataDirFlag = Flags.string({
  description: 'where the store lives',
  env: 'NEXTREC_DATA_DIR',
  default: './data',
});

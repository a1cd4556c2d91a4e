import { Command, Flags } from '@oclif/core';
import { HISTORY_GROUPS, evaluate, type EvaluationReport } from '../../jobs/evaluate/evaluate.js';
import { MODEL_NAMES, type ModelName } from '../artifacts/layout.js';
import { ALGORITHMS } from '../engine/algorithms/registry.js';
import { PipelineHarness } from '../evaluation/harness.js';

const USER_TO_ITEM = ALGORITHMS.filter((algorithm) => algorithm.logicTypes.includes('user-to-item'));

/** `--param cooccurrence.shrink=20` into { cooccurrence: { shrink: 20 } }. */
function parameters(settings: readonly string[]): Partial<Record<ModelName, Record<string, unknown>>> {
  const result: Partial<Record<ModelName, Record<string, unknown>>> = {};
  for (const setting of settings) {
    const match = /^([a-z]+)\.([A-Za-z]+)=(.*)$/.exec(setting);
    if (!match || !MODEL_NAMES.includes(match[1] as ModelName))
      throw new Error(
        `--param ${setting}: expected <model>.<name>=<value>, model one of ${MODEL_NAMES.join(', ')}`,
      );
    const [, model, name, text] = match;
    const value = text === '' || Number.isNaN(Number(text)) ? text : Number(text);
    (result[model as ModelName] ??= {})[name] = value;
  }
  return result;
}

function table(report: EvaluationReport): string {
  const header = ['algorithm', `NDCG@${report.k}`, `Recall@${report.k}`, `HR@${report.k}`, `MRR@${report.k}`];
  header.push('coverage', 'build s', ...HISTORY_GROUPS.map((group) => `NDCG ${group.name}`));
  const rows = report.rows.map((row) => [
    row.name,
    ...[row.ndcg, row.recall, row.hit, row.mrr, row.coverage].map((value) => value.toFixed(4)),
    row.buildSeconds.toFixed(1),
    ...HISTORY_GROUPS.map((group) => {
      const value = row.ndcgByHistory[group.name];
      return Number.isNaN(value) ? '-' : value.toFixed(3);
    }),
  ]);
  const lines = [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`);
  return lines.join('\n');
}

export default class Evaluate extends Command {
  static override summary = 'Measure the user-to-item algorithms on a dataset beside baselines';
  static override description =
    'Splits the dataset, builds the models on the train part as `nextrec build` does, ranks with the serving pipeline and scores the held-out part (NDCG, recall, hit rate, MRR, coverage).';
  static override examples = [
    '<%= config.bin %> evaluate --dataset ratings.csv --split random --seed 2020',
    `<%= config.bin %> evaluate --dataset online_retail.csv.gz --user-column CustomerID --item-column StockCode --time-column InvoiceDate --where "Quantity > 0 AND UnitPrice > 0 AND NOT starts_with(InvoiceNo, 'C')"`,
  ];
  static override flags = {
    dataset: Flags.string({ description: 'CSV or TSV file (gzip allowed) with a header', required: true }),
    split: Flags.string({
      description: 'random: each user 80/10/10 shuffled (seeded); temporal: each user’s last 20% held out',
      options: ['random', 'temporal'],
      default: 'random',
    }),
    seed: Flags.integer({ description: 'seed of the random split', default: 2020 }),
    algorithms: Flags.string({
      description: `comma-separated user-to-item algorithms (default: all of ${USER_TO_ITEM.map((a) => a.name).join(', ')})`,
    }),
    'user-column': Flags.string({ description: 'the user column (default: found by its usual names)' }),
    'item-column': Flags.string({ description: 'the item column' }),
    'time-column': Flags.string({ description: 'the time column (dates, epoch seconds or milliseconds)' }),
    where: Flags.string({
      description: 'DuckDB SQL condition on the file’s columns: rows failing it are left out',
    }),
    param: Flags.string({
      description: 'a job parameter, <model>.<name>=<value> (repeatable)',
      multiple: true,
    }),
    json: Flags.boolean({ description: 'print the report as JSON' }),
    'keep-artifacts': Flags.string({
      description:
        'a data dir to keep the built models in (tenant "evaluation"), their manifests carrying the figures',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Evaluate);
    const names = flags.algorithms?.split(',').map((name) => name.trim()) ?? USER_TO_ITEM.map((a) => a.name);
    const algorithms = names.map((name) => {
      const algorithm = USER_TO_ITEM.find((candidate) => candidate.name === name);
      if (!algorithm)
        this.error(
          `unknown user-to-item algorithm '${name}' (known: ${USER_TO_ITEM.map((a) => a.name).join(', ')})`,
          {
            exit: 2,
          },
        );
      return { name, models: algorithm.models };
    });
    const now = Date.now();
    const report = await evaluate(
      {
        dataset: {
          file: flags.dataset,
          userColumn: flags['user-column'],
          itemColumn: flags['item-column'],
          timeColumn: flags['time-column'],
          where: flags.where,
        },
        split: flags.split as 'random' | 'temporal',
        seed: flags.seed,
        algorithms,
        harness: new PipelineHarness(now),
        parameters: parameters(flags.param ?? []),
        now,
        keepArtifacts: flags['keep-artifacts'],
      },
      (line) => this.logToStderr(line),
    ).catch((error: Error) => this.error(error.message, { exit: 1 }));
    if (flags.json) this.log(JSON.stringify(report, null, 2));
    else {
      const { dataset } = report;
      this.log(
        `${dataset.events} interactions, ${dataset.users} users, ${dataset.items} items; ${report.split} split (seed ${report.seed}): train ${dataset.train}, valid ${dataset.valid}, test ${dataset.test}`,
      );
      this.log(table(report));
    }
  }
}

/** What the record of answers keeps of one (see AnswerLog): its items, algorithm, scenario and experiment. */
export interface AnswerSummary {
  itemIds: string[];
  algorithm: string;
  scenario: string;
  /** The experiment's slug; '' for none. */
  experiment: string;
}

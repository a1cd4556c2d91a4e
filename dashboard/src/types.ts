/** The answers of the API routes the dashboard reads (the analytics, scenario and experiment routes). */

export type InteractionType = 'view' | 'cart' | 'purchase' | 'rating' | 'bookmark';

export interface Summary {
  items: number;
  users: number;
  interactions: number;
  impressions: number;
  byType: Record<InteractionType, number>;
  /** Sums of the purchases' prices and profits. */
  revenue: number;
  profit: number;
}

export interface CatalogCoverage {
  catalogSize: number;
  recommendedItems: number;
  /** A fraction, 0..1. */
  coverage: number;
}

export interface DataList<T> {
  data: T[];
}

export interface VolumeDay {
  date: string;
  count: number;
}

export interface TypeCount {
  type: string;
  count: number;
}

export interface ScenarioInfo {
  slug: string;
  name?: string;
  logicType: string;
}

export interface ScenarioSummary {
  impressions: number;
  clicks: number;
  carts: number;
  purchases: number;
  /** Fractions rounded to 4 places. */
  ctr: number;
  conversion: number;
  revenue: number;
}

export interface FunnelDay {
  date: string;
  impressions: number;
  clicks: number;
  carts: number;
  purchases: number;
  revenue: number;
}

export interface TopItem {
  itemId: string;
  count: number;
}

export interface TopRecommended {
  itemId: string;
  impressions: number;
  clicks: number;
  carts: number;
  purchases: number;
  ctr: number;
  conversion: number;
}

/** `GET /analytics/algorithms`: an algorithm's answers and the impressions and clicks they caused. */
export interface AlgorithmFigures {
  algorithm: string;
  answers: number;
  impressions: number;
  clicks: number;
  ctr: number;
}

export interface Experiment {
  slug: string;
  baseScenario: string;
  variants: { scenario: string; weight: number }[];
  status: string;
}

export interface Significance {
  metric: 'ctr';
  /** Relative CTR change over the first variant. */
  lift: number | null;
  pValue: number | null;
  /** 95% interval of the CTR difference with the first variant. */
  difference95: [number, number] | null;
}

export interface VariantResult {
  scenario: string;
  users: number;
  impressions: number;
  clicks: number;
  purchases: number;
  ctr: number;
  conversion: number;
  /** Null for the first variant, the one the others are compared with. */
  significance: Significance | null;
  revenue: number;
  revenuePerUser: number;
  /** Welch's t-test of revenue per user against the first variant; null for the first. */
  revenueSignificance: RevenueSignificance | null;
}

/** As Significance, of revenue per user: its relative change and the 95% interval of its difference. */
export type RevenueSignificance = Omit<Significance, 'metric'>;

export interface ExperimentResults {
  variants: VariantResult[];
}

import data from './country-clusters.json' with { type: 'json' };

const CLUSTER_OF: ReadonlyMap<string, string> = new Map(
  Object.entries(data.clusters).flatMap(([cluster, countries]) =>
    countries.map((country) => [country, cluster]),
  ),
);

/** The region a country borrows geo statistics from when it has too few events of its own. */
export function clusterOf(country: string): string | undefined {
  return CLUSTER_OF.get(country);
}

export function clusterCountries(cluster: string): readonly string[] {
  return (data.clusters as Record<string, string[]>)[cluster] ?? [];
}

/** The fields of the vectors job's configuration file in the lake (`vectorConfigFile`, src/lake/layout.ts). */
export type VectorConfigField = 'templates' | 'defaults' | 'scenarios';

const kinds = new Map<string, VectorConfigField>();

/**
 * The store knows no kind of configuration document: the owner of a kind the vectors job reads registers
 * it here, with the field its documents fill, and the lake export writes them there.
 */
export function exportToVectorConfig(kind: string, field: VectorConfigField): void {
  kinds.set(kind, field);
}

/** The kinds registered so far, by the field they fill. */
export function vectorConfigKinds(): ReadonlyMap<string, VectorConfigField> {
  return kinds;
}

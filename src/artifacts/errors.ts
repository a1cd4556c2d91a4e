/** An artifact that cannot be served: missing, half-written, corrupt or inconsistent. */
export class ArtifactError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArtifactError';
  }
}

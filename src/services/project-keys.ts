/**
 * @module
 * Where a project keeps its bytes in R2 (DESIGN.md §3 Projects): everything under its prefix,
 * deleted with it. Apart so that projects and revisions both use it without importing each other.
 */

/** Where a project keeps its bytes; deleting the project deletes everything under it. */
export const projectPrefix = (projectId: string) => `projects/${projectId}/`

export const maskKey = (projectId: string, revisionId: string) => `${projectPrefix(projectId)}masks/${revisionId}.png`

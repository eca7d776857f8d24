// Which file on disk a document is. Only file: URIs name one: untitled buffers and other schemes
// have no path nvcc could compile or a workspace could hold, so they map to null and each caller
// decides what that means (no build, no workspace root, the URI as the analysis' label).
import { fileURLToPath } from 'url';

export function uriToPath(uri: string): string | null {
  if (!uri.startsWith('file:')) return null;
  try {
    return fileURLToPath(uri);
  } catch {
    // A file: URI naming another host (file://server/share/x.cu) has no local path here.
    return null;
  }
}

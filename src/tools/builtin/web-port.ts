// The public-web capability (src/web/ implements it): fetch one URL through the SSRF
// boundary, search through the configured backend. Failures are WebError-shaped:
// `{code, message}` with a stable code the tools hand to the model.

export interface FetchedPage {
  url: string;
  status: number;
  content_type: string;
  title: string | null;
  text: string;
  truncated: boolean;
}

export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

export interface WebPort {
  fetch(url: string, signal: AbortSignal): Promise<FetchedPage>;
  /** Throws a WEB_SEARCH_DISABLED error when no backend is configured. */
  search(query: string, limit: number, signal: AbortSignal): Promise<SearchHit[]>;
}

import { http, HttpResponse, type HttpHandler } from 'msw';

/**
 * A last handler that answers any request no other handler took with a 501 naming its method and URL
 * (`application/problem+json`), for test setups that prefer an answer to MSW's
 * `onUnhandledFrame: 'error'` (which makes the request itself fail). Put it after the other handlers.
 *
 * @example
 * setupServer(...createStatelessHandlers('mapping'), createCatchAllHandler());
 */
export function createCatchAllHandler(): HttpHandler {
  return http.all('*', ({ request }) => {
    const url = new URL(request.url);
    const where = `${request.method} ${url.origin}${url.pathname}`;
    return HttpResponse.json(
      {
        type: 'about:blank',
        title: 'Not mocked',
        status: 501,
        detail: `No Portolan mock handler answers ${where}: no operation of the mocked specs has this method and path at this base URL.`,
      },
      { status: 501, headers: { 'content-type': 'application/problem+json' } },
    );
  });
}

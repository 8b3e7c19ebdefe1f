import { describe, expect, it } from 'vitest';
import { createGeoPlaneClient, dataOf, GeoPlaneApiError, serverRoot } from '../../client/index.ts';

/** A fetch that records each request and answers with `answer`. */
function fakeFetch(answer: () => Response) {
  const seen: Request[] = [];
  return {
    seen,
    fetch: async (request: Request) => {
      seen.push(request);
      return answer();
    },
  };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

const importPath = '/api/v1/workspaces/{workspace}/imports/{import}' as const;

describe('the generated client wrapper', () => {
  it.each([
    ['https://h.example/api/v1', 'https://h.example'],
    ['https://h.example/prod/api/v1/', 'https://h.example/prod'],
    ['https://h.example/prod', 'https://h.example/prod'],
    ['https://127.0.0.1:8443/', 'https://127.0.0.1:8443'],
  ])('takes %s as the server root %s', (url, root) => {
    expect(serverRoot(url)).toBe(root);
  });

  it('sends the API key, asks for JSON and encodes path parameters', async () => {
    // Prepare
    const fake = fakeFetch(() => json(200, { id: 'i1', status: 'queued' }));
    const api = createGeoPlaneClient({
      baseUrl: 'https://h.example/api/v1',
      apiKey: 'gpk_x',
      fetch: fake.fetch,
    });

    // Act
    const job = dataOf(await api.GET(importPath, { params: { path: { workspace: 'a b/c', import: 'i1' } } }));

    // Assess
    expect(job.id).toBe('i1');
    const request = fake.seen[0] as Request;
    expect(request.method).toBe('GET');
    expect(request.url).toBe('https://h.example/api/v1/workspaces/a%20b%2Fc/imports/i1');
    expect(request.headers.get('X-API-Key')).toBe('gpk_x');
    expect(request.headers.get('Accept')).toBe('application/json');
    expect(request.headers.get('Authorization')).toBeNull();
  });

  it('sends a bearer token and a JSON body', async () => {
    const fake = fakeFetch(() => json(201, { id: 'i2' }));
    const api = createGeoPlaneClient({
      baseUrl: 'https://h.example',
      bearerToken: 'eyJ.x.y',
      fetch: fake.fetch,
    });

    await api.POST('/api/v1/workspaces/{workspace}/imports', {
      params: { path: { workspace: 'w' } },
      body: { source: { kind: 'upload', filename: 'a.geojson', size_bytes: 10 } },
    });

    const request = fake.seen[0] as Request;
    expect(request.headers.get('Authorization')).toBe('Bearer eyJ.x.y');
    expect(request.headers.get('X-API-Key')).toBeNull();
    expect(request.headers.get('Content-Type')).toBe('application/json');
    expect(await request.json()).toEqual({
      source: { kind: 'upload', filename: 'a.geojson', size_bytes: 10 },
    });
  });

  it('turns the standard error body into a GeoPlaneApiError', async () => {
    const body = {
      code: 404,
      message: 'Not Found',
      detail: 'no import i9 in workspace w',
      reason: 'import_not_found',
      request_id: 'r-1',
    };
    const api = createGeoPlaneClient({
      baseUrl: 'https://h.example',
      fetch: fakeFetch(() => json(404, body)).fetch,
    });

    const error = await api
      .GET(importPath, { params: { path: { workspace: 'w', import: 'i9' } } })
      .then(dataOf)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(GeoPlaneApiError);
    const apiError = error as GeoPlaneApiError;
    expect(apiError.status).toBe(404);
    expect(apiError.body).toEqual(body);
    expect(apiError.reason).toBe('import_not_found');
    expect(apiError.requestId).toBe('r-1');
    expect(apiError.message).toBe('Not Found (import_not_found)');
  });

  it('keeps an error answer that is not the standard body as text', async () => {
    const api = createGeoPlaneClient({
      baseUrl: 'https://h.example',
      fetch: fakeFetch(() => new Response('<html>bad gateway</html>', { status: 502 })).fetch,
    });

    const error = await api
      .GET(importPath, { params: { path: { workspace: 'w', import: 'i1' } } })
      .then(dataOf)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(GeoPlaneApiError);
    expect((error as GeoPlaneApiError).body).toBeUndefined();
    expect((error as GeoPlaneApiError).message).toBe('HTTP 502: <html>bad gateway</html>');
  });

  it('answers a 204 with no data', async () => {
    const api = createGeoPlaneClient({
      baseUrl: 'https://h.example',
      fetch: fakeFetch(() => new Response(null, { status: 204 })).fetch,
    });

    const answer = await api.DELETE(importPath, { params: { path: { workspace: 'w', import: 'i1' } } });

    expect(answer.response.status).toBe(204);
    expect(dataOf(answer)).toBeUndefined();
  });
});

// Calls to the service, with the API key from this tab's session (if one was entered).

const KEY = "evidencedesk.apiKey";

export const apiKey = {
  get: () => sessionStorage.getItem(KEY) || "",
  set: (value) => (value ? sessionStorage.setItem(KEY, value) : sessionStorage.removeItem(KEY)),
};

export async function api(path, body = undefined, accept = "application/json") {
  const headers = { Accept: accept };
  const key = apiKey.get();
  if (key) headers["X-API-Key"] = key;
  const init = { headers, method: body === undefined ? "GET" : "POST" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (!response.ok) {
    let detail = response.statusText;
    try {
      const data = await response.json();
      detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
    } catch (_) {
      /* not JSON */
    }
    throw new Error(`${response.status}: ${detail}`);
  }
  return accept === "application/json" ? response.json() : response.text();
}

// Calls to the service, with the API key from this tab's session (if one was entered).

const KEY = "evidencedesk.apiKey";

export const apiKey = {
  get: () => sessionStorage.getItem(KEY) || "",
  set: (value) => (value ? sessionStorage.setItem(KEY, value) : sessionStorage.removeItem(KEY)),
};

// fetch() with the API key; a response that is not ok rejects with "STATUS: detail".
async function request(path, init) {
  const key = apiKey.get();
  if (key) init.headers["X-API-Key"] = key;
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
  return response;
}

export async function api(path, body = undefined, accept = "application/json") {
  const headers = { Accept: accept };
  const init = { headers, method: body === undefined ? "GET" : "POST" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await request(path, init);
  return accept === "application/json" ? response.json() : response.text();
}

// A POST answered with server-sent events: onDelta(text) for each piece of the answer as it is
// written; resolves with the final ("done") result. An "error" event rejects.
export async function apiStream(path, body, onDelta) {
  const headers = { Accept: "text/event-stream", "Content-Type": "application/json" };
  const response = await request(path, { method: "POST", headers, body: JSON.stringify({ ...body, stream: true }) });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const line = block.split("\n").find((l) => l.startsWith("data: "));
      if (!line) continue;
      const event = JSON.parse(line.slice(6));
      if (event.type === "delta") onDelta(event.text);
      else if (event.type === "done") return event.result;
      else if (event.type === "error") throw new Error(`${event.status}: ${event.detail}`);
    }
  }
  throw new Error("the answer stream ended before its final event");
}

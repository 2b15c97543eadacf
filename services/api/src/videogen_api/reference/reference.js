// The reference viewer: Swagger UI over this api's own /openapi.json. "Try it out" calls this origin with the
// key the reader gives under "Authorize" (kept in the page's memory only, never stored).
"use strict";

window.addEventListener("DOMContentLoaded", async () => {
  const response = await fetch("/openapi.json", { credentials: "omit" });
  const spec = await response.json();
  // Calls go to the origin the page was opened on (the document names the deployment's public URL, which may
  // be another spelling of it).
  spec.servers = [{ url: window.location.origin, description: "this api" }];
  window.SwaggerUIBundle({
    spec,
    dom_id: "#reference",
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: false,
    displayRequestDuration: true,
    tryItOutEnabled: false,
    layout: "BaseLayout",
    presets: [window.SwaggerUIBundle.presets.apis],
  });
});

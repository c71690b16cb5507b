// Starts Swagger UI on swmgr's own OpenAPI document. Everything the page
// loads comes from this switch: no validator badge, no external URL box.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/public/v1/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    persistAuthorization: false,
    docExpansion: "none",
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});

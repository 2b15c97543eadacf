// Every operation of the API's OpenAPI document (as the committed types hold it) has an SDK method.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { Videogen } from "../../dist/index.js";

// operationId → the method that calls it.
const OPERATIONS = {
  createGeneration: "generations.create",
  getGeneration: "generations.get",
  listGenerations: "generations.list",
  cancelGeneration: "generations.cancel",
  deleteGeneration: "generations.delete",
  streamGenerationEvents: "generations.events",
  getMedia: "generations.download", // the signed video_url a completed generation carries
  listProviders: "providers.list",
  listModels: "models.list",
  createUpload: "uploads.create",
  getUpload: "uploads.get",
  deleteUpload: "uploads.delete",
  createWebhook: "webhooks.create",
  listWebhooks: "webhooks.list",
  getWebhook: "webhooks.get",
  updateWebhook: "webhooks.update",
  deleteWebhook: "webhooks.delete",
  rotateWebhookSecret: "webhooks.rotateSecret",
  sendTestEvent: "webhooks.sendTest",
  recoverDeliveries: "webhooks.recover",
  listDeliveries: "webhooks.deliveries",
  getDelivery: "deliveries.get",
  retryDelivery: "deliveries.retry",
  getUsage: "usage.get",
  listAuditEvents: "auditEvents.list",
  listEvents: "events.list",
  getEvent: "events.get",
  getBudgets: "budgets.get",
  setBudgets: "budgets.set",
  listApiKeys: "apiKeys.list",
  createApiKey: "apiKeys.create",
  getApiKey: "apiKeys.get",
  updateApiKey: "apiKeys.update",
  revokeApiKey: "apiKeys.revoke",
  createBatch: "batches.create",
  getBatch: "batches.get",
  listBatches: "batches.list",
  listBatchGenerations: "batches.generations",
  getBatchResults: "batches.results",
  cancelBatch: "batches.cancel",
};

// Operations the API serves to others than its tenants: no SDK method.
const NOT_FOR_TENANTS = new Set([
  "providerCallback", // the providers' callbacks (Luma, fal) to the URL a create gave them
]);

async function documentedOperations() {
  const types = await readFile(new URL("../../src/generated/openapi.ts", import.meta.url), "utf8");
  const operations = types.slice(types.indexOf("export interface operations {"));
  return [...operations.matchAll(/^ {4}(\w+): \{$/gm)].map((match) => match[1]);
}

test("every operation of the API has an SDK method", async () => {
  const documented = await documentedOperations();
  assert.ok(documented.length > 10);
  const missing = documented.filter((id) => !(id in OPERATIONS) && !NOT_FOR_TENANTS.has(id));
  assert.deepEqual(missing, [], `operations with no SDK method: add one, and a line above`);
  const client = new Videogen({ apiKey: "vg_test", baseURL: "http://127.0.0.1:9/v1" });
  for (const [id, path] of Object.entries(OPERATIONS)) {
    const [resource, method] = path.split(".");
    assert.equal(typeof client[resource]?.[method], "function", `${id}: no ${path}`);
  }
});

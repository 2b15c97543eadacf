// A tenant's first script: from a prompt to a downloaded video (run from the folder the tarball is installed
// in). It is also type-checked, as it is, under tsc --strict.
import { Videogen } from "@videogen/client";

const client = new Videogen(); // VIDEOGEN_API_KEY, VIDEOGEN_BASE_URL
const video = await client.generations.createAndWait({
  prompt: "a red fox running through snow",
  provider: "mock",
  duration: 3,
});
const written = await client.generations.downloadToFile(video.id, "fox.mp4");
console.log(video.status, written);

// A Node module resolution hook: `@github/copilot-sdk[/...]` resolves inside the host's copy, or
// inside a given SDK build (a folder with index.js and extension.js, as Copilot CLI unpacks its own).
import { pathToFileURL } from "node:url";

let sdkParent = null;
let sdkBuild = null;

export function initialize(data) {
  if (data && data.sdkBuild) {
    sdkBuild = data.sdkBuild.replace(/\/?$/, "/");
  } else if (data && data.sdkRoot) {
    // A file in the folder whose node_modules holds the SDK: resolution starts from there.
    sdkParent = pathToFileURL(data.sdkRoot.replace(/\/?$/, "/") + "package.json").href;
  }
}

export async function resolve(specifier, context, nextResolve) {
  if (specifier === "@github/copilot-sdk" || specifier.startsWith("@github/copilot-sdk/")) {
    if (sdkBuild) {
      // "@github/copilot-sdk" is its index.js, "@github/copilot-sdk/extension" its extension.js.
      const sub = specifier.slice("@github/copilot-sdk".length).replace(/^\//, "") || "index";
      return { url: pathToFileURL(sdkBuild + sub.replace(/\.js$/, "") + ".js").href, shortCircuit: true };
    }
    if (sdkParent) {
      return nextResolve(specifier, { ...context, parentURL: sdkParent });
    }
  }
  return nextResolve(specifier, context);
}

// A Node module resolution hook: `@github/copilot-sdk[/...]` resolves inside the host's copy.
import { pathToFileURL } from "node:url";

let sdkParent = null;

export function initialize(data) {
  if (data && data.sdkRoot) {
    // A file in the folder whose node_modules holds the SDK: resolution starts from there.
    sdkParent = pathToFileURL(data.sdkRoot.replace(/\/?$/, "/") + "package.json").href;
  }
}

export async function resolve(specifier, context, nextResolve) {
  if (sdkParent && (specifier === "@github/copilot-sdk" || specifier.startsWith("@github/copilot-sdk/"))) {
    return nextResolve(specifier, { ...context, parentURL: sdkParent });
  }
  return nextResolve(specifier, context);
}

/**
 * The webhook vectors in a browser: bundled by esbuild into one classic script (format iife) that a page loads; it
 * sets `checkWebhookVectors`, which the test calls with the vectors through page.evaluate.
 */
import { checkVectors } from "./check"

;(globalThis as { checkWebhookVectors?: typeof checkVectors }).checkWebhookVectors = checkVectors

/**
 * The try-on warnings (src/contract/tryon.ts TRYON_WARNINGS) in words, for /try-on: a person reads
 * what the result means for them rather than a code. Its own module so a test can read it too.
 */
import { TRYON_WARNINGS } from '../../src/contract/tryon-warnings'

/** What each warning means for the person looking at the result. */
export const WARNING_SENTENCES: Record<string, string> = {
  [TRYON_WARNINGS.experimental]:
    'Experimental and non-commercial: this picture is an approximation made for evaluation, not a photograph. Do not use it in a shop, an advert or anywhere commercial.',
  [TRYON_WARNINGS.partialBody]:
    'Part of the body this garment covers is outside the photo or hidden, so the garment was placed from estimated points. Check the fit, or use a photo that shows the whole region.',
  [TRYON_WARNINGS.noPose]:
    'No person was found in the person photo. Use an upright photo of one person facing the camera.',
}

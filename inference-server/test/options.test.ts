import { describe, expect, it } from 'vitest'
import { parseRemoveOptions } from '../src/options.js'

const parse = (q: string) => parseRemoveOptions(new URLSearchParams(q))

describe('parseRemoveOptions', () => {
  it('parses raw and binary options', () => {
    expect(parse('quality=balanced&alpha=raw&feather=0&output=mask')).toEqual({
      quality: 'balanced',
      alpha: { mode: 'raw', feather: 0 },
      output: 'mask',
    })
    expect(parse('quality=high&alpha=binary&threshold=0.5&feather=2.5&output=cutout')).toEqual({
      quality: 'high',
      alpha: { mode: 'binary', threshold: 0.5, feather: 2.5 },
      output: 'cutout',
    })
  })
  it.each([
    [
      'quality=best&alpha=raw&feather=0&output=mask',
      /^Expected one of fast, balanced, high for quality but received best of type string$/,
    ],
    [
      'quality=fast&alpha=binary&threshold=2&feather=0&output=mask',
      /^Expected number between 0 and 1 for threshold but received 2 of type string$/,
    ],
    [
      'quality=fast&alpha=binary&feather=0&output=mask',
      /^Expected number between 0 and 1 for threshold but received undefined of type undefined$/,
    ],
    ['quality=fast&alpha=raw&threshold=0.5&feather=0&output=mask', /^Expected no threshold for alpha raw/],
    ['quality=fast&alpha=raw&feather=5&output=mask', /^Expected number between 0 and 4 for feather but received 5/],
    [
      'quality=fast&alpha=raw&feather=&output=mask',
      /^Expected number between 0 and 4 for feather but received {2}of type string$/,
    ],
    ['quality=fast&alpha=raw&feather=0&output=png', /^Expected one of mask, cutout for output/],
    ['quality=fast&alpha=raw&feather=0&output=mask&format=png', /^Unknown parameter format$/],
    ['quality=fast&quality=high&alpha=raw&feather=0&output=mask', /^Expected one value for quality/],
  ])('rejects %s', (q, message) => {
    expect(() => parse(q)).toThrow(message)
    try {
      parse(q)
    } catch (err) {
      expect(err).toMatchObject({ code: 'invalid_input', status: 400, retryable: false })
    }
  })
})

describe('maxPixels', () => {
  it('accepts a pixel budget and refuses one out of range', () => {
    expect(parse('quality=fast&alpha=raw&feather=0&output=cutout&maxPixels=250000')).toMatchObject({
      maxPixels: 250000,
    })
    expect(() => parse('quality=fast&alpha=raw&feather=0&output=cutout&maxPixels=10')).toThrow(/maxPixels/)
  })
})

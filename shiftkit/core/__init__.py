"""The pure core: the feature list, the rules, the log, the settings — values in, values out.

No git, no subprocess, no file I/O (the one exception: `features` reads the JSON Schema the
package ships). Imports nothing from the layers above it.
"""

# cmake -DOUT=... -DSOURCE_CONFIG=web/tsconfig.json -DNODE_MODULES=... -DWIRE=.../wire.ts -P write_tsconfig.cmake:
# the tsconfig of the page's type check: the source one, with node_modules from the build folder and
# the module 'rung-wire' mapped to the declarations generated from proto/rung.proto.
file(WRITE ${OUT} "{\n  \"extends\": \"${SOURCE_CONFIG}\",\n  \"compilerOptions\": {\n    \"baseUrl\": \"${NODE_MODULES}\",\n    \"paths\": { \"rung-wire\": [\"${WIRE}\"] }\n  }\n}\n")

# cmake -DHEADER=proto/protocol_version.h -DOUT=.../version.py -P write_protocol_version.cmake: the
# Python client's PROTOCOL_VERSION from the one place it is set.
file(READ ${HEADER} text)
string(REGEX MATCH "kProtocolVersion = ([0-9]+);" found "${text}")
if(NOT found)
  message(FATAL_ERROR "no kProtocolVersion in ${HEADER}")
endif()
file(WRITE ${OUT} "# Generated from proto/protocol_version.h by the build.\nPROTOCOL_VERSION = ${CMAKE_MATCH_1}\n")

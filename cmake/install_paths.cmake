# install_paths.cmake: runs at install time (install(SCRIPT) in CMakeLists.txt, after the
# install(CODE) there has set IDGEN_SOURCE_DIR, IDGEN_BINARY_DIR, PROJECT_VERSION and the
# CMAKE_INSTALL_*DIR folders). Writes the files that name install paths for the prefix
# given then (`cmake --install --prefix P`, `make install PREFIX=P`), and installs them:
# the .pc files, the systemd unit (ExecStart, Documentation=) and the man pages (their
# pointer to the docs).
foreach(dir BINDIR LIBDIR INCLUDEDIR DOCDIR MANDIR SYSTEMD_UNITDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(CMAKE_INSTALL_FULL_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(CMAKE_INSTALL_FULL_${dir} "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(out "${IDGEN_BINARY_DIR}/installed")

foreach(pc idgen idgen-opaque idgen-etcd idgen-redis idgen-zookeeper idgen-client)
  configure_file("${IDGEN_SOURCE_DIR}/${pc}.pc.in" "${out}/${pc}.pc" @ONLY)
  file(INSTALL "${out}/${pc}.pc" DESTINATION "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig")
endforeach()

configure_file("${IDGEN_SOURCE_DIR}/deploy/systemd/idgen.service.in" "${out}/idgen.service"
  @ONLY)
file(INSTALL "${out}/idgen.service" DESTINATION "${CMAKE_INSTALL_FULL_SYSTEMD_UNITDIR}")

# scripts/man.py leaves @IDGEN_DOCDIR@ where a page names the docs' folder.
file(GLOB pages "${IDGEN_BINARY_DIR}/man/*.[13]")
foreach(page ${pages})
  get_filename_component(name "${page}" NAME)
  string(REGEX MATCH "[13]$" section "${name}")
  file(READ "${page}" text)
  string(REPLACE "@IDGEN_DOCDIR@" "${CMAKE_INSTALL_FULL_DOCDIR}" text "${text}")
  file(WRITE "${out}/man${section}/${name}" "${text}")
  file(INSTALL "${out}/man${section}/${name}" DESTINATION
    "${CMAKE_INSTALL_FULL_MANDIR}/man${section}")
endforeach()

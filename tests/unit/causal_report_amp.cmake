# The load amplification parts of the JSON and HTML reports: the scalability
# curve and each line's curves per load (src/causal/amp_profiles.c,
# report_json.c, report_html.c) on generated sweep profiles.
lever_unit_test(test_causal_report_amp
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_causal_report_amp.c
  LIBS lever_causal lever_base PkgConfig::JANSSON m)

"""The fault matrix: one test per way a misbehaving extension, client or environment has broken
the host, each with real processes, each asserting the outcome and that nothing is left running.

| fault | test |
|---|---|
| the first extension (by name) hangs at import | ``test_supervisor::test_an_extension_that_hangs_at_import_delays_and_fails_only_itself`` |
| an earlier extension joins after a later one took its tool | ``test_supervisor::test_an_earlier_extension_that_joins_late_takes_its_tool_from_a_later_one``, ``test_collisions_in_a_chain_end_as_load_order_says_whatever_order_the_extensions_join_in`` |
| a guard hook answers with a non-object or malformed output | ``test_hooks::test_a_guard_hook_answering_a_non_object_or_malformed_output_denies_and_an_observer_warns`` |
| deeply nested JSON from an extension | ``test_wire::test_deeply_nested_json_from_an_extension_fails_it_at_once_and_its_pending_call_with_it`` |
| deeply nested JSON on the control socket | ``test_wire::test_deeply_nested_json_on_the_control_socket_gets_a_parse_error_and_the_host_serves_on`` |
| a header no frame can follow from an extension (``Content-Length`` twice, a bare ``\\n``) | ``test_wire::test_a_header_no_frame_can_follow_fails_the_extension_at_once_and_its_pending_call_with_it`` |
| a header no frame can follow on the control socket (``Content-Length`` twice, a 200 KB line) | ``test_wire::test_a_header_no_frame_can_follow_on_the_control_socket_gets_a_parse_error_and_the_host_serves_on`` |
| tool arguments or a result nested deeper than the other side reads | ``test_wire::test_arguments_or_a_result_nested_deeper_than_the_other_side_reads_fail_that_call_and_no_extension_stops`` |
| a tool returns text with a lone surrogate | ``test_wire::test_a_tool_returning_a_file_name_that_is_not_utf8_is_answered_with_a_replacement_character`` |
| ``extensions call`` prints a lone surrogate | ``test_wire::test_extensions_call_prints_a_lone_surrogate_from_a_raw_client_without_crashing``, ``test_front::test_extensions_call_prints_text_with_lone_surrogates_without_crashing`` |
| 8 tool results of 20 MiB | ``test_front::test_eight_tool_results_of_20_mib_are_kept_cut_and_the_host_does_not_hold_them`` |
| an extension that never reads its stdin | ``test_wire::test_an_extension_that_never_reads_is_failed_once_its_queue_is_full_and_host_memory_stays_bounded`` |
| tool arguments over the message limit | ``test_wire::test_arguments_over_the_message_limit_fail_that_call_and_leave_the_extension_running`` |
| a tool result over the message limit | ``test_wire::test_a_result_over_the_message_limit_is_answered_with_a_failure_saying_so`` |
| the host is SIGKILLed (Python, Node.js) | ``test_processes::test_a_host_killed_with_sigkill_takes_each_python_extensions_process_group_with_it``, ``..._a_javascript_extensions_process_group_with_it`` |
| a process left its extension's group | ``test_processes::test_a_process_that_left_its_extensions_group_is_ended_when_the_host_stops``, ``..._when_the_host_is_killed`` |
| a guard hook that hangs | ``test_hooks::test_a_guard_that_hangs_is_suspended_after_two_timeouts_until_its_extension_reloads`` |
| a plain ``def`` hook that hangs | ``test_wire::test_a_hung_plain_def_hook_called_40_times_does_not_starve_its_extensions_tools`` |
| the fork server is killed | ``test_processes::test_extensions_outlive_their_fork_server_and_the_next_start_gets_a_new_one`` |
| an extension writes into its own folder | ``test_supervisor::test_an_extension_that_writes_into_its_own_folder_has_its_watching_paused``, ``test_extensions_reload_resumes_the_paused_watching_of_a_running_dev`` |
| an extension crashes after joining | ``test_supervisor::test_an_extension_that_crashes_after_joining_is_restarted_then_quarantined`` (and ``test_a_one_shot_host_does_not_restart_a_crashed_extension``, ``test_stopping_the_host_while_a_restart_waits_for_its_backoff_stops_at_once``) |
| two projects with an extension of the same name | ``test_front::test_two_projects_with_an_extension_of_the_same_name_keep_separate_logs`` |
| ``dev`` with stdin at end of file | ``test_front::test_dev_with_stdin_at_its_end_keeps_watching_until_a_signal`` |
| a closed stdout (``list --json | head -1``) | ``test_front::test_a_closed_stdout_ends_list_quietly``, ``test_dev_ends_when_the_reader_of_its_output_goes_away`` |
| a root that does not exist | ``test_front::test_a_root_that_is_not_a_folder_is_a_usage_error_and_an_exception`` |
| an extension ignores end of stream in a one-shot command | ``test_front::test_a_one_shot_command_does_not_wait_the_stop_grace_for_an_extension_that_ignores_end_of_stream`` |
| ``list`` stops an extension right after it joins | ``test_supervisor::test_list_answers_a_request_sent_right_after_joining_before_stopping_the_extension`` |
| a JavaScript extension cannot find an npm package | ``test_processes::test_a_javascript_extension_that_cannot_find_a_package_fails_with_that_line``, ``test_the_failure_line_of_a_node_report_is_the_line_that_names_the_error``, ``test_the_failure_line_of_a_python_traceback_is_still_its_exception_line`` |

Property-based tests of the same promises live beside the code they test:
``tests/sdk_extension/wire/test_framing.py`` (any bytes in any chunks: messages or ``FramingError``,
never more than the frame limit held; hostile headers and nesting refused by their last byte,
never waited on) and ``tests/extension_host/test_hook_runner.py`` (no JSON
answer lets a guard pass unless it is a valid allow).
"""
